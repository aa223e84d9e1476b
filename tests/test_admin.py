"""The admin: operators browse dinner-friday and its acta, read-only, and may erase a session."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse

from chronica import Actum, models, services
from chronica.admin import TRANSCRIPT_LIMIT, transcript_line

from . import scenario
from .scenario import CHRONICUM, OWNER, A, H, M, T

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:chronica_chronicum_changelist")
ACTA = reverse("admin:chronica_actum_changelist")


def change_url(chronicum_id: str) -> str:
    return reverse("admin:chronica_chronicum_change", args=[chronicum_id])


def record_dinner(chronicum_id: str = CHRONICUM) -> list[Actum]:
    return [services.record_actum(OWNER, a) for a in scenario.acta(chronicum_id)]


def record_rafa_lunch() -> Actum:
    return services.record_actum(
        "rafa",
        Actum(chronicum_id="lunch-saturday", kind=M, actor_kind=H, actor="rafa", content="Sushi?"),
    )


def transcript_contents(html: str) -> list[str]:
    return [
        unescape(m)
        for m in re.findall(r'<pre class="chronica-content[^"]*">(.*?)</pre>', html, re.S)
    ]


def staff(username: str, *codenames: str) -> Client:
    user = User.objects.create_user(username, password="pw", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


class TestChronicaChangelist:
    def test_lists_id_owner_times_and_the_number_of_acta(self, admin_client):
        record_dinner()
        record_rafa_lunch()
        response = admin_client.get(CHANGELIST)
        assert response.status_code == 200
        rows = {c.id: c for c in response.context["cl"].result_list}
        assert {i: (c.owner_id, c.acta_total) for i, c in rows.items()} == {
            CHRONICUM: (OWNER, 7),
            "lunch-saturday": ("rafa", 1),
        }
        html = response.content.decode()
        for header in ("column-id", "column-owner_id", "column-started_at"):
            assert header in html
        assert "column-last_activity_at" in html
        assert '<td class="field-acta_count">7</td>' in html

    @pytest.mark.parametrize(
        ("q", "found"),
        [("dinner", [CHRONICUM]), ("rafa", ["lunch-saturday"]), ("ardian", [CHRONICUM])],
    )
    def test_search_by_id_and_by_owner(self, admin_client, q, found):
        record_dinner()
        record_rafa_lunch()
        response = admin_client.get(CHANGELIST, {"q": q})
        assert [c.id for c in response.context["cl"].result_list] == found

    def test_date_hierarchy_on_last_activity_and_date_filters(self, admin_client):
        stored = record_dinner()
        last = stored[-1].at
        response = admin_client.get(
            CHANGELIST,
            {
                "last_activity_at__year": last.year,
                "last_activity_at__month": last.month,
                "last_activity_at__day": last.day,
            },
        )
        assert [c.id for c in response.context["cl"].result_list] == [CHRONICUM]
        assert response.context["cl"].date_hierarchy == "last_activity_at"
        response = admin_client.get(CHANGELIST, {"last_activity_at__year": last.year - 1})
        assert list(response.context["cl"].result_list) == []
        filters = [f.title for f in response.context["cl"].filter_specs]
        assert filters == ["last activity", "started"]

    def test_a_page_of_100_chronica_costs_as_many_queries_as_a_page_of_one(
        self, admin_client, django_assert_num_queries
    ):
        record_dinner("session-0")
        admin_client.get(CHANGELIST)  # the session and the content types, once
        with django_assert_num_queries(QUERIES_PER_PAGE) as one:
            admin_client.get(CHANGELIST)
        for i in range(1, 100):
            services.record_actum(
                OWNER,
                Actum(
                    chronicum_id=f"session-{i}",
                    kind=M,
                    actor_kind=H,
                    actor=OWNER,
                    content=f"Table {i}?",
                ),
            )
        with django_assert_num_queries(QUERIES_PER_PAGE) as hundred:
            response = admin_client.get(CHANGELIST)
        assert len(response.context["cl"].result_list) == 100
        assert len(one.captured_queries) == len(hundred.captured_queries)


# The session, the user, the paginator's COUNT, the page with its acta counts, and the
# date hierarchy's range and days.
QUERIES_PER_PAGE = 6


class TestTranscript:
    def test_every_actum_in_write_order_with_kind_actor_and_time(self, admin_client):
        stored = record_dinner()
        html = admin_client.get(change_url(CHRONICUM)).content.decode()
        assert 'id="transcript"' in html
        kinds = re.findall(r'data-kind="([a-z_]+)"', html)
        assert kinds == [a.kind.value for a in stored]
        assert re.findall(r'class="chronica-actor">([a-z]+)<', html) == [a.actor for a in stored]
        assert re.findall(r'class="chronica-actor-kind">([a-z]+)<', html) == [
            a.actor_kind.value for a in stored
        ]
        contents = transcript_contents(html)
        assert contents[0] == scenario.SEVEN[0][3]
        assert contents[-1] == scenario.SEVEN[-1][3]
        assert f'datetime="{stored[0].at.isoformat()}"' in html
        assert "7 acta in write order." in html

    def test_tool_json_is_pretty_printed_and_kinds_look_different(self, admin_client):
        record_dinner()
        html = admin_client.get(change_url(CHRONICUM)).content.decode()
        request = transcript_contents(html)[2]
        assert request == '{\n  "area": "Kemang",\n  "party": 4,\n  "quiet": true\n}'
        for kind in ("message", "thought", "tool_request", "tool_response"):
            assert f"chronica-kind-{kind}" in html
        assert "chronica/admin/transcript.css" in html

    def test_long_content_is_folded_behind_a_preview(self, admin_client):
        long = "Ardian asked for a quiet table. " * 40
        services.record_actum(
            OWNER,
            Actum(chronicum_id=CHRONICUM, kind=T, actor_kind=A, actor="concierge", content=long),
        )
        html = admin_client.get(change_url(CHRONICUM)).content.decode()
        assert html.count("<details") == 1
        summary = re.search(r"<summary>(.*?)</summary>", html, re.S)
        assert summary is not None
        assert summary.group(1).startswith("Ardian asked for a quiet table.")
        assert summary.group(1).endswith("…")
        assert transcript_contents(html) == [long]

    def test_a_huge_session_shows_the_most_recent_200_and_links_to_all(self, admin_client):
        for i in range(1, TRANSCRIPT_LIMIT + 6):
            services.record_actum(
                OWNER,
                Actum(
                    chronicum_id=CHRONICUM,
                    kind=M,
                    actor_kind=H,
                    actor=OWNER,
                    content=f"message {i}",
                ),
            )
        html = admin_client.get(change_url(CHRONICUM)).content.decode()
        contents = transcript_contents(html)
        assert len(contents) == TRANSCRIPT_LIMIT
        assert (contents[0], contents[-1]) == ("message 6", "message 205")
        assert re.findall(r'data-position="(\d+)"', html)[:2] == ["6", "7"]
        assert "The most recent 200 of 205 acta, oldest first." in html
        link = f'<a href="{ACTA}?chronicum={CHRONICUM}">All 205 acta of this chronicum</a>'
        assert link in html

    def test_an_id_with_a_slash_opens_its_own_page(self, admin_client):
        record_dinner("ardian/dinner-friday")
        record_dinner()
        response = admin_client.get(change_url("ardian_2Fdinner-friday"))
        assert response.status_code == 200
        assert len(transcript_contents(response.content.decode())) == 7
        assert "chronicum=ardian%2Fdinner-friday" in response.content.decode()

    def test_tool_content_that_is_not_json_is_shown_as_sent(self):
        line = transcript_line(
            3,
            Actum(
                chronicum_id=CHRONICUM,
                kind="tool_request",
                actor_kind=A,
                actor="search",
                content="area=Kemang party=4",
            ),
        )
        assert (line.content, line.is_json, line.folded) == ("area=Kemang party=4", False, False)


class TestAppendOnly:
    def test_nobody_adds_a_chronicum_or_an_actum(self, admin_client):
        assert admin_client.get(reverse("admin:chronica_chronicum_add")).status_code == 403
        assert admin_client.get(reverse("admin:chronica_actum_add")).status_code == 403

    def test_the_change_page_is_read_only_and_a_post_changes_nothing(self, admin_client):
        record_dinner()
        response = admin_client.get(change_url(CHRONICUM))
        html = response.content.decode()
        assert 'name="_save"' not in html
        assert response.context["adminform"].form.fields == {}
        assert set(response.context["adminform"].readonly_fields) >= {
            "id",
            "owner_id",
            "started_at",
            "last_activity_at",
        }
        posted = admin_client.post(change_url(CHRONICUM), {"owner_id": "rafa"})
        assert posted.status_code == 403
        assert models.Chronicum.objects.get(id=CHRONICUM).owner_id == OWNER

    def test_an_actum_is_read_only_and_cannot_be_deleted_alone(self, admin_client):
        stored = record_dinner()
        seq = models.Actum.objects.get(id=stored[0].id).seq
        page = admin_client.get(reverse("admin:chronica_actum_change", args=[seq]))
        assert page.status_code == 200
        assert 'name="_save"' not in page.content.decode()
        assert 'class="deletelink"' not in page.content.decode()
        delete = reverse("admin:chronica_actum_delete", args=[seq])
        assert admin_client.post(delete, {"post": "yes"}).status_code == 403
        assert "delete_selected" not in admin_client.get(ACTA).content.decode()
        assert models.Actum.objects.count() == 7

    def test_a_viewer_reads_the_transcript_but_cannot_erase(self):
        record_dinner()
        viewer = staff("support", "view_chronicum", "view_actum")
        assert viewer.get(change_url(CHRONICUM)).status_code == 200
        delete = reverse("admin:chronica_chronicum_delete", args=[CHRONICUM])
        assert viewer.post(delete, {"post": "yes"}).status_code == 403
        assert models.Actum.objects.count() == 7

    def test_erasure_deletes_the_chronicum_with_its_acta(self):
        record_dinner()
        record_rafa_lunch()
        # Only the chronicum's delete permission: acta go with it, never alone.
        eraser = staff("dpo", "view_chronicum", "delete_chronicum")
        delete = reverse("admin:chronica_chronicum_delete", args=[CHRONICUM])
        confirm = eraser.get(delete).content.decode()
        assert "7 acta" in confirm
        assert "have permission" not in confirm
        assert eraser.post(delete, {"post": "yes"}).status_code == 302
        assert not models.Chronicum.objects.filter(id=CHRONICUM).exists()
        assert list(models.Actum.objects.values_list("chronicum_id", flat=True)) == [
            "lunch-saturday"
        ]

    def test_erasure_of_several_chronica_from_the_changelist(self, admin_client):
        record_dinner()
        record_rafa_lunch()
        data = {"action": "delete_selected", "_selected_action": [CHRONICUM, "lunch-saturday"]}
        confirm = admin_client.post(CHANGELIST, data).content.decode()
        assert "Chronica: 2" in confirm
        assert "Acta: 8" in confirm
        admin_client.post(CHANGELIST, {**data, "post": "yes"})
        assert models.Chronicum.objects.count() == models.Actum.objects.count() == 0


class TestActaChangelist:
    @pytest.mark.parametrize(
        ("params", "contents"),
        [
            ({"kind__exact": "thought"}, ["Search first, then hand the booking over."]),
            ({"actor_kind__exact": "human"}, [scenario.SEVEN[0][3], "Rumah Teduh.", "Sushi?"]),
            ({"chronicum": "lunch-saturday"}, ["Sushi?"]),
            ({"q": "Kemang"}, [scenario.SEVEN[0][3], scenario.SEVEN[2][3]]),
            ({"q": "concierge"}, [scenario.SEVEN[1][3], scenario.SEVEN[6][3]]),
        ],
    )
    def test_filters_and_search(self, admin_client, params, contents):
        record_dinner()
        record_rafa_lunch()
        response = admin_client.get(ACTA, params)
        assert response.status_code == 200
        assert [a.content for a in response.context["cl"].result_list] == contents

    def test_the_chronicum_filter_offers_the_selected_one_and_recent_ones(self, admin_client):
        record_dinner()
        record_rafa_lunch()
        response = admin_client.get(ACTA, {"chronicum": CHRONICUM})
        spec = next(f for f in response.context["cl"].filter_specs if f.title == "chronicum")
        assert [c for c, _ in spec.lookup_choices] == ["lunch-saturday", CHRONICUM]
        assert spec.value() == CHRONICUM
