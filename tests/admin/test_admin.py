"""The admin: operators browse dinner-friday and its acta, read-only, and may erase a session."""

from __future__ import annotations

import json
import re
import threading
import time
import traceback
import tracemalloc
from html import unescape

import pytest
from django.contrib.admin import site
from django.contrib.auth.models import Permission, User
from django.db import connection, connections
from django.test import Client
from django.urls import reverse

from chronica import Actum, ChronicumNotFound, models, services
from chronica.admin import TRANSCRIPT_LIMIT, shown
from chronica.signals import chronicum_deleted

from .. import scenario
from ..scenario import CHRONICUM, OWNER, REQ, RES, A, H, M, T

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
        for header in ("column-id", "column-owner", "column-started_at"):
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
        assert filters == ["owner", "last activity", "started"]

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
        text = shown("area=Kemang party=4", 19, pretty=True)
        assert text is not None
        assert (text.text, text.is_json, text.folded, text.cut) == (
            "area=Kemang party=4",
            False,
            False,
            False,
        )


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
            "owner",
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
        response = eraser.post(delete, {"post": "yes"})
        # Back on the list of sessions (Django sends whoever may not change one to the index).
        assert response.status_code == 302
        assert response["Location"] == CHANGELIST
        assert not models.Chronicum.objects.filter(id=CHRONICUM).exists()
        assert list(models.Actum.objects.values_list("chronicum_id", flat=True)) == [
            "lunch-saturday"
        ]

    def test_the_breadcrumb_names_the_app_and_the_sessions_apart(self, admin_client):
        record_dinner()
        page = admin_client.get(change_url(CHRONICUM)).content.decode()
        # Django 5.2 wraps them in a <div>, Django 6 in an <ol>.
        breadcrumbs = re.search(r'class="breadcrumbs">(.*?)</(?:div|ol)>', page, re.S)[1]
        names = [unescape(n).strip() for n in re.findall(r">([^<>]+)</a>", breadcrumbs)]
        assert names[1:] == ["Agent sessions", "Chronica"]

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
        # The acta list shows the newest first.
        assert [a.content for a in response.context["cl"].result_list] == contents[::-1]

    def test_the_acta_list_is_newest_first(self, admin_client):
        record_dinner()
        newest = record_rafa_lunch()
        result = admin_client.get(ACTA).context["cl"].result_list
        assert result[0].id == newest.id
        assert [a.seq for a in result] == sorted((a.seq for a in result), reverse=True)

    def test_the_chronicum_filter_offers_the_selected_one_and_recent_ones(self, admin_client):
        record_dinner()
        record_rafa_lunch()
        response = admin_client.get(ACTA, {"chronicum": CHRONICUM})
        spec = next(f for f in response.context["cl"].filter_specs if f.title == "chronicum")
        assert [c for c, _ in spec.lookup_choices] == ["lunch-saturday", CHRONICUM]
        assert spec.value() == CHRONICUM


# -- structured acta: data and call_id ---------------------------------------------


def record_search_call(chronicum_id: str = CHRONICUM, call_id: str = "call-kemang") -> list[Actum]:
    """The concierge's search as a tool call with structured data, then its answer."""
    return services.record_acta(
        OWNER,
        [
            Actum(
                chronicum_id=chronicum_id,
                kind=REQ,
                actor_kind=A,
                actor="search",
                content='{"area":"Kemang","party":4}',
                call_id=call_id,
                data=SEARCH_CALL,
            ),
            Actum(
                chronicum_id=chronicum_id,
                kind=RES,
                actor_kind=A,
                actor="search",
                content="Rumah Teduh and Kayu Manis",
                call_id=call_id,
                data=SEARCH_OUTPUT,
            ),
        ],
    )


SEARCH_CALL = {"type": "function_call", "name": "search", "arguments": {"area": "Kemang"}}
SEARCH_OUTPUT = {
    "type": "function_call_output",
    "output": [{"name": "Rumah Teduh", "table": True}, {"name": "Kayu Manis", "table": True}],
}


def data_blocks(html: str) -> list[str]:
    return [
        unescape(m)
        for m in re.findall(
            r'<details class="chronica-data">.*?<pre class="chronica-content chronica-json">'
            r"(.*?)</pre>",
            html,
            re.S,
        )
    ]


def seq_of(actum: Actum) -> int:
    return models.Actum.objects.get(id=actum.id).seq


class TestStructuredActa:
    def test_data_is_folded_pretty_printed_json(self, admin_client):
        record_dinner()
        record_search_call()
        html = admin_client.get(change_url(CHRONICUM)).content.decode()
        blocks = data_blocks(html)
        assert [json.loads(b) for b in blocks] == [SEARCH_CALL, SEARCH_OUTPUT]
        # Pretty-printed (in the key order the database keeps: jsonb sorts keys).
        assert blocks == [json.dumps(json.loads(b), indent=2) for b in blocks]
        assert blocks[1].splitlines()[:3] in (
            ["{", '  "type": "function_call_output",', '  "output": ['],
            ["{", '  "output": [', "    {"],
        )
        # Folded: a closed <details>, with a one-line preview in its summary.
        assert html.count('<details class="chronica-data">') == 2
        previews = re.findall(
            r'<summary><span class="chronica-data-label">data</span> <code>(.*?)</code>', html
        )
        assert json.loads(unescape(previews[0])) == SEARCH_CALL
        assert len(unescape(previews[1])) == 81
        assert previews[1].endswith("…")

    def test_a_tool_response_links_to_its_request_on_the_page(self, admin_client):
        request, _ = record_search_call()
        html = admin_client.get(change_url(CHRONICUM)).content.decode()
        assert f'id="actum-{seq_of(request)}"' in html
        link = re.search(r'<a class="chronica-call-link" href="([^"]+)"[^>]*>([^<]+)</a>', html)
        assert link is not None
        assert link.groups() == (f"#actum-{seq_of(request)}", "call-kemang")
        # The request shows its call ID too, without a link.
        assert '<code class="chronica-call-id">call-kemang</code>' in html

    def test_a_response_whose_request_is_not_shown_links_to_the_call_in_the_acta_list(
        self, admin_client
    ):
        request, _ = record_search_call()
        for i in range(TRANSCRIPT_LIMIT):
            services.record_actum(
                OWNER,
                Actum(
                    chronicum_id=CHRONICUM,
                    kind=M,
                    actor_kind=A,
                    actor="concierge",
                    content=f"Still looking ({i}).",
                ),
            )
        services.record_actum(
            OWNER,
            Actum(
                chronicum_id=CHRONICUM,
                kind=RES,
                actor_kind=A,
                actor="search",
                content="One more: Sate Khas Senayan.",
                call_id="call-kemang",
            ),
        )
        html = admin_client.get(change_url(CHRONICUM)).content.decode()
        assert f'id="actum-{seq_of(request)}"' not in html
        url = f"{ACTA}?chronicum={CHRONICUM}&amp;call_id=call-kemang"
        assert f'<a class="chronica-call-link" href="{url}"' in html
        listed = admin_client.get(ACTA, {"chronicum": CHRONICUM, "call_id": "call-kemang"})
        assert [a.kind for a in listed.context["cl"].result_list] == [  # newest first
            "tool_response",
            "tool_response",
            "tool_request",
        ]

    def test_the_acta_list_shows_the_call_id_linked_to_the_call(self, admin_client):
        record_search_call()
        html = admin_client.get(ACTA).content.decode()
        url = f"{ACTA}?chronicum={CHRONICUM}&amp;call_id=call-kemang"
        assert html.count(f'<a href="{url}">call-kemang</a>') == 2


# -- bounded pages -------------------------------------------------------------------

MENU = "Rumah Teduh menu: nasi goreng, sate, rendang, es teler. "  # 57 characters


def huge_acta(count: int, size: int) -> list[Actum]:
    """``count`` acta of ``size`` characters: content for half of them, data for the rest."""
    text = (MENU * (size // len(MENU) + 1))[:size]
    acta = []
    for i in range(count):
        if i % 2:
            actum = Actum(
                chronicum_id=CHRONICUM,
                kind=RES,
                actor_kind=A,
                actor="search",
                call_id=f"call-{i}",
                data={"menu": text[: size - 12]},
            )
        else:
            actum = Actum(
                chronicum_id=CHRONICUM, kind=M, actor_kind=A, actor="search", content=text
            )
        acta.append(services.record_actum(OWNER, actum))
    return acta


class TestBoundedPages:
    def test_40_acta_of_2_4_mb_make_pages_of_a_few_hundred_kb(self, admin_client):
        """The chronicum's page and the acta list, over one set of 96 MB of acta (writing
        them is most of this test's time)."""
        huge_acta(40, 2_400_000)
        tracemalloc.start()
        try:
            response = admin_client.get(change_url(CHRONICUM))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert response.status_code == 200
        assert len(response.content) < 500_000
        # The 96 MB of acta never reach the worker: only their first few KB are read.
        assert peak < 20_000_000
        html = response.content.decode()
        cut = re.findall(r"Cut: ([\d,]+) characters in all\.", html)
        assert len(cut) == 40
        assert all(2_399_000 < int(n.replace(",", "")) <= 2_400_000 for n in cut)
        assert len(transcript_contents(html)) == 20 + 20  # the contents, and the data blocks

        response = admin_client.get(ACTA)
        assert len(response.context["cl"].result_list) == 40
        assert len(response.content) < 200_000

    def test_a_full_page_of_the_worst_text_stays_under_2_5_mb(self, admin_client):
        # Every character of these escapes to five or six bytes of HTML.
        worst = "\"<>&'" * 4000
        services.record_acta(
            OWNER,
            [
                Actum(
                    chronicum_id=CHRONICUM,
                    kind=REQ,
                    actor_kind=A,
                    actor="search",
                    content=worst,
                    call_id=f"call-{i}",
                    data=[worst],
                )
                for i in range(TRANSCRIPT_LIMIT)
            ],
        )
        response = admin_client.get(change_url(CHRONICUM))
        assert len(transcript_contents(response.content.decode())) == 2 * TRANSCRIPT_LIMIT
        assert len(response.content) < 2_500_000

    def test_an_actums_own_page_is_bounded_and_links_to_all_of_it(self, admin_client):
        message, response_actum = huge_acta(2, 2_400_000)
        for actum, field in ((message, "content"), (response_actum, "data")):
            page = admin_client.get(reverse("admin:chronica_actum_change", args=[seq_of(actum)]))
            assert page.status_code == 200
            assert len(page.content) < 100_000
            raw = reverse("admin:chronica_actum_raw", args=[seq_of(actum), field])
            assert f'<a href="{raw}">Show all</a>' in page.content.decode()

    def test_show_all_streams_the_whole_actum(self, admin_client):
        message, response_actum = huge_acta(2, 2_400_000)
        content = admin_client.get(
            reverse("admin:chronica_actum_raw", args=[seq_of(message), "content"])
        )
        assert content.streaming
        assert content["Content-Type"] == "text/plain; charset=utf-8"
        assert content["X-Content-Type-Options"] == "nosniff"
        chunks = list(content.streaming_content)
        assert len(chunks) > 1
        assert b"".join(chunks).decode() == message.content
        data = admin_client.get(
            reverse("admin:chronica_actum_raw", args=[seq_of(response_actum), "data"])
        )
        assert data["Content-Type"] == "application/json"
        assert json.loads(b"".join(data.streaming_content)) == response_actum.data

    def test_show_all_needs_the_view_permission(self, admin_client):
        (message,) = huge_acta(1, 10_000)
        raw = reverse("admin:chronica_actum_raw", args=[seq_of(message), "content"])
        assert staff("support", "view_chronicum").get(raw).status_code == 403
        assert staff("auditor", "view_actum").get(raw).status_code == 200
        wrong = reverse("admin:chronica_actum_raw", args=[seq_of(message), "idempotency_key"])
        assert admin_client.get(wrong).status_code == 404
        assert admin_client.get(raw.replace(str(seq_of(message)), "999999")).status_code == 404

    def test_a_short_actum_is_shown_whole_on_its_page(self, admin_client):
        _, response_actum = record_search_call()
        page = admin_client.get(
            reverse("admin:chronica_actum_change", args=[seq_of(response_actum)])
        )
        html = page.content.decode()
        assert "Show all" not in html
        assert unescape(json.dumps(SEARCH_OUTPUT, indent=2)) in unescape(html)
        assert "Rumah Teduh and Kayu Manis" in html


# -- erasure through chronica.services -------------------------------------------------


@pytest.fixture
def deleted_signals():
    received: list[tuple[str, str]] = []

    def receiver(sender, owner_id, chronicum_id, **kwargs):
        received.append((owner_id, chronicum_id))

    chronicum_deleted.connect(receiver)
    yield received
    chronicum_deleted.disconnect(receiver)


class TestErasureThroughServices:
    def test_the_change_page_offers_delete_to_a_user_who_may(self):
        record_dinner()
        eraser = staff("dpo", "view_chronicum", "delete_chronicum")
        html = eraser.get(change_url(CHRONICUM)).content.decode()
        delete = reverse("admin:chronica_chronicum_delete", args=[CHRONICUM])
        assert f'href="{delete}" class="deletelink"' in html
        viewer = staff("support", "view_chronicum")
        assert 'class="deletelink"' not in viewer.get(change_url(CHRONICUM)).content.decode()

    def test_the_change_page_deletes_as_the_owner_and_chronica_says_so(
        self, admin_client, deleted_signals, django_capture_on_commit_callbacks
    ):
        record_dinner()
        delete = reverse("admin:chronica_chronicum_delete", args=[CHRONICUM])
        with django_capture_on_commit_callbacks(execute=True):
            assert admin_client.post(delete, {"post": "yes"}).status_code == 302
        assert deleted_signals == [(OWNER, CHRONICUM)]
        with pytest.raises(ChronicumNotFound):
            services.get_chronicum(OWNER, CHRONICUM)

    def test_a_confirmed_delete_is_logged_and_needs_the_csrf_token(self):
        from django.contrib.admin.models import DELETION, LogEntry

        record_dinner()
        delete = reverse("admin:chronica_chronicum_delete", args=[CHRONICUM])
        eraser = staff("dpo", "view_chronicum", "delete_chronicum")
        checked = Client(enforce_csrf_checks=True)
        checked.force_login(User.objects.get(username="dpo"))
        assert checked.post(delete, {"post": "yes"}).status_code == 403
        assert models.Chronicum.objects.filter(id=CHRONICUM).exists()
        assert eraser.post(delete, {"post": "yes"}).status_code == 302
        entry = LogEntry.objects.get(action_flag=DELETION)
        assert (entry.object_id, entry.user.username) == (CHRONICUM, "dpo")
        assert not models.Chronicum.objects.filter(id=CHRONICUM).exists()

    def test_the_action_deletes_each_as_its_owner(
        self, admin_client, deleted_signals, django_capture_on_commit_callbacks
    ):
        record_dinner()
        record_rafa_lunch()
        data = {"action": "delete_selected", "_selected_action": [CHRONICUM, "lunch-saturday"]}
        with django_capture_on_commit_callbacks(execute=True):
            admin_client.post(CHANGELIST, {**data, "post": "yes"})
        assert sorted(deleted_signals) == [(OWNER, CHRONICUM), ("rafa", "lunch-saturday")]

    def test_a_chronicum_deleted_meanwhile_is_no_error(self, admin_client, rf):
        record_dinner()
        chronicum = models.Chronicum.objects.get(id=CHRONICUM)
        services.delete_chronicum(OWNER, CHRONICUM)
        model_admin = site._registry[models.Chronicum]
        model_admin.delete_model(rf.post("/"), chronicum)  # raises nothing
        delete = reverse("admin:chronica_chronicum_delete", args=[CHRONICUM])
        assert admin_client.post(delete, {"post": "yes"}).status_code == 302


class Writers:
    """Agents recording into one chronicum through chronica.services from real threads,
    until stopped; every actum they were told is stored is kept in ``acknowledged``."""

    def __init__(self, chronicum_id: str, count: int = 4, owner: str = OWNER) -> None:
        self.chronicum_id, self.owner = chronicum_id, owner
        # SQLite hands its lock to whoever polls first, not to whoever waited longest:
        # writers in a tight loop can starve another connection past its busy timeout.
        # Agents pause between writes (for their model); PostgreSQL gets no pause.
        self.pause = 0.01 if connection.vendor == "sqlite" else 0
        self.stop = threading.Event()
        self.acknowledged: list[list[Actum]] = [[] for _ in range(count)]
        self.errors: list[str] = []
        self.threads = [threading.Thread(target=self.write, args=(i,)) for i in range(count)]

    def write(self, i: int) -> None:
        try:
            while not self.stop.is_set():
                actum = Actum(
                    chronicum_id=self.chronicum_id,
                    kind=M,
                    actor_kind=A,
                    actor=f"booking-{i}",
                    content=f"booking-{i} reply {len(self.acknowledged[i])}",
                )
                self.acknowledged[i].append(services.record_actum(self.owner, actum))
                time.sleep(self.pause)
        except BaseException:
            self.errors.append(traceback.format_exc())
        finally:
            connections.close_all()

    def wait_for(self, more: int) -> None:
        """Until every writer has recorded ``more`` further acta (or one has failed)."""
        targets = [len(acks) + more for acks in self.acknowledged]
        deadline = time.monotonic() + 120  # a guard against a hang, not a timing assertion
        while not self.errors and any(
            len(acks) < target for acks, target in zip(self.acknowledged, targets, strict=True)
        ):
            assert time.monotonic() < deadline, "the writers stopped writing"
            time.sleep(0.005)

    def __enter__(self) -> Writers:
        for thread in self.threads:
            thread.start()
        self.wait_for(2)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join()

    def check_each_landed_before_or_after(self, erased: set[str]) -> None:
        """No writer failed; every actum still stored is one a writer was told about, and
        a writer's acta that survived the erasure are its last ones (written after it)."""
        assert not self.errors, self.errors[0]
        stored = set(
            models.Actum.objects.filter(chronicum_id=self.chronicum_id).values_list("id", flat=True)
        )
        assert not stored & erased
        told = {a.id for acks in self.acknowledged for a in acks}
        assert stored <= told
        for acks in self.acknowledged:
            kept = [a.id in stored for a in acks]
            assert kept == sorted(kept), "an actum written before the erasure survived it"
        assert stored, "no writer wrote after the erasure"
        assert models.Chronicum.objects.get(id=self.chronicum_id).owner_id == self.owner


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("via", ["change page", "changelist action"])
def test_erasure_while_four_agents_write_is_never_an_error(admin_client, via):
    for round_ in range(3):
        chronicum_id = f"dinner-friday-{round_}"
        old = services.record_acta(
            OWNER,
            [
                Actum(chronicum_id=chronicum_id, kind=M, actor_kind=H, actor=OWNER, content=f"{i}")
                for i in range(1000)
            ],
        ) + services.record_acta(
            OWNER,
            [
                Actum(chronicum_id=chronicum_id, kind=M, actor_kind=H, actor=OWNER, content=f"{i}")
                for i in range(1000, 3000)
            ],
        )
        with Writers(chronicum_id) as writers:
            if via == "change page":
                url = reverse("admin:chronica_chronicum_delete", args=[chronicum_id])
                response = admin_client.post(url, {"post": "yes"})
            else:
                data = {"action": "delete_selected", "_selected_action": [chronicum_id]}
                response = admin_client.post(CHANGELIST, {**data, "post": "yes"})
            assert response.status_code == 302
            writers.wait_for(3)
        writers.check_each_landed_before_or_after({a.id for a in old})


# -- owners shown as users ----------------------------------------------------------------


def lunch_for(owner_id: str, chronicum_id: str) -> Actum:
    return services.record_actum(
        owner_id,
        Actum(chronicum_id=chronicum_id, kind=M, actor_kind=H, actor="guest", content="Sushi?"),
    )


def owner_cells(html: str) -> list[str]:
    return [
        unescape(m) for m in re.findall(r'<td class="field-owner"><a href="[^"]*">(.*?)</a>', html)
    ]


class TestOwners:
    def test_an_owner_who_is_a_user_is_shown_as_the_user(self, admin_client, ardian):
        lunch_for(str(ardian.pk), CHRONICUM)
        lunch_for("ardian", "quickstart-session")
        lunch_for("999999", "orphan-session")
        html = admin_client.get(CHANGELIST).content.decode()
        assert sorted(owner_cells(html)) == sorted([f"{ardian.pk} (ardian)", "ardian", "999999"])
        page = admin_client.get(change_url(CHRONICUM)).content.decode()
        assert f"{ardian.pk} (ardian)" in page

    def test_with_an_owner_id_of_its_own_the_project_sees_its_ids(
        self, admin_client, ardian, settings
    ):
        settings.CHRONICA = {"OWNER_ID": "tests.admin.test_admin.username_owner"}
        lunch_for(str(ardian.pk), CHRONICUM)
        assert owner_cells(admin_client.get(CHANGELIST).content.decode()) == [str(ardian.pk)]

    def test_the_owner_links_to_the_owners_chronica(self, admin_client, ardian, rafa):
        lunch_for(str(ardian.pk), CHRONICUM)
        lunch_for(str(rafa.pk), "lunch-saturday")
        html = admin_client.get(CHANGELIST).content.decode()
        assert f'<a href="{CHANGELIST}?owner={ardian.pk}">{ardian.pk} (ardian)</a>' in html

    @pytest.mark.parametrize("typed", ["username", "pk"])
    def test_staff_filter_by_owner_typing_a_user_name_or_an_id(
        self, admin_client, ardian, rafa, typed
    ):
        lunch_for(str(ardian.pk), CHRONICUM)
        lunch_for(str(rafa.pk), "lunch-saturday")
        lunch_for("ardian", "quickstart-session")
        value = "ardian" if typed == "username" else str(ardian.pk)
        response = admin_client.get(CHANGELIST, {"owner": value, "q": "i"})
        found = sorted(c.id for c in response.context["cl"].result_list)
        expected = [CHRONICUM, "quickstart-session"] if typed == "username" else [CHRONICUM]
        assert found == expected
        html = response.content.decode()
        # A text box keeps what was typed and the other parameters; the choice names the user.
        assert f'name="owner" value="{value}"' in html
        assert '<input type="hidden" name="q" value="i">' in html
        spec = next(f for f in response.context["cl"].filter_specs if f.title == "owner")
        assert f"{ardian.pk} (ardian)" in spec.lookup_choices[0][1]

    @pytest.mark.parametrize(
        ("url", "param"),
        [(CHANGELIST, "owner"), (ACTA, "chronicum"), (ACTA, "call_id")],
    )
    def test_a_filter_value_no_store_can_hold_finds_nothing(self, admin_client, url, param):
        record_dinner()
        response = admin_client.get(url, {param: "dinner\x00friday"})
        assert response.status_code == 200
        assert list(response.context["cl"].result_list) == []

    def test_the_owner_filter_and_column_stay_bounded_for_many_users(
        self, admin_client, django_assert_num_queries, django_user_model
    ):
        users = django_user_model.objects.bulk_create(
            [django_user_model(username=f"guest-{i}") for i in range(300)]
        )
        lunch_for(str(users[0].pk), "session-0")
        admin_client.get(CHANGELIST)
        with django_assert_num_queries(QUERIES_PER_PAGE + 1) as one:
            admin_client.get(CHANGELIST)
        for i, user in enumerate(users[1:100], start=1):
            lunch_for(str(user.pk), f"session-{i}")
        with django_assert_num_queries(QUERIES_PER_PAGE + 1) as hundred:
            response = admin_client.get(CHANGELIST)
        assert len(one.captured_queries) == len(hundred.captured_queries)
        html = response.content.decode()
        assert len(owner_cells(html)) == 100
        sidebar = html[html.index('id="changelist-filter"') :]
        assert "guest-" not in sidebar.split("</details>")[0]


def username_owner(user) -> str:
    return user.get_username()
