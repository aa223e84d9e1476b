"""chronica.api over HTTP: ardian's dinner-friday, read back by its owner only.

Two users: ardian owns dinner-friday; rafa must not be able to tell it exists.
"""

from __future__ import annotations

import json
import socket

import pytest
from django.db import OperationalError, connections
from django.db.utils import load_backend
from django.test import override_settings
from django.urls import reverse
from rest_framework.test import APIClient

from chronica import Actum, InvalidActum, services
from chronica.stores.memory import InMemoryStore

from .. import scenario
from ..scenario import CHRONICUM

BOOKING_KEY = "booking-reply-1"
ACTUM_FIELDS = {
    "id",
    "chronicum_id",
    "kind",
    "actor_kind",
    "actor",
    "content",
    "at",
    "call_id",
    "data",
    "recorded_by",
    "compacts",
    "redacted",
}


def chronicum_url(chronicum_id: str = CHRONICUM) -> str:
    return reverse("chronica:chronicum-detail", args=[chronicum_id])


def acta_url(chronicum_id: str = CHRONICUM) -> str:
    return reverse("chronica:chronicum-acta", args=[chronicum_id])


def body(actum) -> dict[str, str]:
    return {
        "kind": str(actum.kind),
        "actor_kind": str(actum.actor_kind),
        "actor": actum.actor,
        "content": actum.content,
    }


def post(client: APIClient, payload, *, chronicum_id: str = CHRONICUM, key: str | None = None):
    headers = {} if key is None else {"Idempotency-Key": key}
    return client.post(acta_url(chronicum_id), payload, format="json", headers=headers)


def username(user) -> str:
    """An OWNER_ID setting some projects would choose."""
    return user.username


class LostConnectionStore(InMemoryStore):
    """A store whose database went away."""

    def get(self, chronicum_id):
        raise OperationalError("server closed the connection unexpectedly")

    window = append = lambda self, *args, **kwargs: self.get("")


class BuggyStore(InMemoryStore):
    """A store with a bug: a ValueError that is not chronica's."""

    def get(self, chronicum_id):
        raise ValueError("invalid literal for int() with base 10: 'dinner-friday'")

    def acta(self, chronicum_id, query):
        raise ValueError("invalid literal for int() with base 10: 'dinner-friday'")

    def window(self, owner_id, chronicum_id, query):
        raise ValueError("invalid literal for int() with base 10: 'dinner-friday'")


def broken_owner_id(user):
    """A project's OWNER_ID with a bug."""
    return str(int(user.username))


@pytest.fixture
def as_ardian(ardian) -> APIClient:
    client = APIClient()
    client.force_login(ardian)
    return client


@pytest.fixture
def as_rafa(rafa) -> APIClient:
    client = APIClient()
    client.force_login(rafa)
    return client


@pytest.fixture
def dinner(as_ardian) -> list[dict]:
    """ardian's seven acta of dinner-friday, as the API stored them."""
    stored = []
    for actum in scenario.acta():
        response = post(as_ardian, body(actum))
        assert response.status_code == 201, response.content
        stored.append(response.json())
    return stored


def window(client: APIClient, query: str = "", chronicum_id: str = CHRONICUM) -> list[dict]:
    response = client.get(f"{acta_url(chronicum_id)}{query}")
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.django_db
class TestDinnerFriday:
    def test_seven_acta_in_the_last_three_messages_out(self, as_ardian, dinner):
        last_three = window(as_ardian, "?kind=message&last_n=3")
        assert [(a["actor"], a["content"]) for a in last_three] == [
            ("search", "Rumah Teduh and Kayu Manis both have a quiet table for four at 7pm."),
            ("ardian", "Rumah Teduh."),
            ("concierge", "Book Rumah Teduh for four at 7pm on Friday under Ardian."),
        ]

    def test_the_whole_session_comes_back_in_write_order(self, as_ardian, dinner):
        assert window(as_ardian) == dinner
        assert [a["content"] for a in dinner] == [content for *_, content in scenario.SEVEN]

    def test_a_stored_actum_has_the_fields_of_the_contract(self, dinner):
        first = dinner[0]
        assert set(first) == ACTUM_FIELDS
        assert first["chronicum_id"] == CHRONICUM
        assert (first["kind"], first["actor_kind"], first["actor"], first["recorded_by"]) == (
            "message",
            "human",
            "ardian",
            "owner",
        )
        assert len(first["id"]) == 32
        assert first["at"]

    def test_kinds_repeated_or_comma_separated_mean_the_same(self, as_ardian, dinner):
        repeated = window(as_ardian, "?kind=tool_request&kind=tool_response&actor_kind=agent")
        assert [a["actor"] for a in repeated] == ["search", "search"]
        assert window(as_ardian, "?kind=tool_request,tool_response&actor_kind=agent") == repeated
        assert window(as_ardian, "?kind=tool_request,tool_response&kind=tool_response") == repeated

    def test_actor_kind_filters_before_the_limit(self, as_ardian, dinner):
        assert [a["content"] for a in window(as_ardian, "?actor_kind=human&last_n=2")] == [
            "Find us a quiet table for four in Kemang on Friday at 7pm.",
            "Rumah Teduh.",
        ]

    @pytest.mark.parametrize("query", ["?last_n=0", "?last_n=-3", "?last_n=%2B0", "?format=json"])
    def test_no_limit_and_no_filter_spelled_other_ways(self, as_ardian, dinner, query):
        assert window(as_ardian, query) == dinner

    def test_the_chronicum_belongs_to_the_signed_in_user(self, ardian, as_ardian, dinner):
        response = as_ardian.get(chronicum_url())
        assert response.status_code == 200
        chronicum = response.json()
        assert set(chronicum) == {"id", "owner_id", "started_at", "last_activity_at"}
        assert chronicum["id"] == CHRONICUM
        assert chronicum["owner_id"] == str(ardian.pk)
        assert chronicum["last_activity_at"] == dinner[-1]["at"]

    def test_ids_sent_by_the_caller_are_replaced(self, as_ardian):
        payload = {**body(scenario.booking_reply()), "id": "mine", "chronicum_id": "elsewhere"}
        stored = post(as_ardian, payload).json()
        assert stored["id"] != "mine"
        assert stored["chronicum_id"] == CHRONICUM

    def test_a_plain_actum_has_no_call_id_and_null_data(self, dinner):
        assert {(a["call_id"], a["data"]) for a in dinner} == {("", None)}

    def test_an_empty_tool_response_is_recorded(self, as_ardian):
        payload = {"kind": "tool_response", "actor_kind": "agent", "actor": "search"}
        response = post(as_ardian, payload)
        assert response.status_code == 201
        assert response.json()["content"] == ""


@pytest.mark.django_db
class TestOnlyTheOwner:
    """rafa gets 404 on every call into ardian's chronicum, exactly as for one that
    never existed, and writes nothing into it."""

    @pytest.mark.parametrize("path", ["chronicum", "acta"])
    def test_reading_someone_elses_looks_like_reading_nothing(self, as_rafa, dinner, path):
        url = chronicum_url if path == "chronicum" else acta_url
        theirs = as_rafa.get(url(CHRONICUM))
        missing = as_rafa.get(url("never-existed"))
        assert theirs.status_code == missing.status_code == 404
        assert theirs.content == missing.content
        assert theirs.json() == {"detail": "Not found."}

    def test_writing_into_someone_elses_is_404_and_writes_nothing(self, as_ardian, as_rafa, dinner):
        response = post(as_rafa, body(scenario.booking_reply()))
        assert response.status_code == 404
        assert response.json() == {"detail": "Not found."}
        assert window(as_ardian) == dinner

    def test_a_key_ardian_used_returns_nothing_to_rafa(self, as_ardian, as_rafa):
        assert post(as_ardian, body(scenario.booking_reply()), key=BOOKING_KEY).status_code == 201
        response = post(as_rafa, body(scenario.booking_reply()), key=BOOKING_KEY)
        assert response.status_code == 404
        assert response.json() == {"detail": "Not found."}

    def test_rafas_own_session_of_the_same_id_is_impossible(self, as_ardian, as_rafa, dinner):
        # The first writer owns the ID; rafa cannot claim or see it.
        assert as_rafa.get(acta_url()).status_code == 404
        assert as_ardian.get(chronicum_url()).status_code == 200

    def test_each_reads_only_their_own(self, rafa, as_ardian, as_rafa, dinner):
        post(as_rafa, body(scenario.booking_reply()), chronicum_id="rafa-lunch")
        assert as_rafa.get(chronicum_url("rafa-lunch")).json()["owner_id"] == str(rafa.pk)
        assert as_ardian.get(chronicum_url("rafa-lunch")).status_code == 404
        assert len(window(as_rafa, chronicum_id="rafa-lunch")) == 1

    def test_owner_id_setting_chooses_the_owner(self, as_ardian):
        with override_settings(CHRONICA={"OWNER_ID": f"{__name__}.username"}):
            assert post(as_ardian, body(scenario.booking_reply())).status_code == 201
            assert as_ardian.get(chronicum_url()).json()["owner_id"] == "ardian"
        # Back on the default, str(user.pk) is someone else than "ardian".
        assert as_ardian.get(chronicum_url()).status_code == 404


@pytest.mark.django_db
class TestIdempotency:
    def test_a_replay_is_200_with_the_first_actum(self, as_ardian, dinner):
        first = post(as_ardian, body(scenario.booking_reply()), key=BOOKING_KEY)
        assert first.status_code == 201
        assert "Idempotent-Replayed" not in first.headers

        reworded = body(scenario.booking_reply(scenario.BOOKING_REPLY_REWORDED))
        replay = post(as_ardian, reworded, key=BOOKING_KEY)
        assert replay.status_code == 200
        assert replay.headers["Idempotent-Replayed"] == "true"
        assert replay.json() == first.json()
        assert replay.json()["content"] == scenario.BOOKING_REPLY
        assert window(as_ardian) == [*dinner, first.json()]

    def test_the_key_is_per_chronicum(self, as_ardian):
        here = post(as_ardian, body(scenario.booking_reply()), key=BOOKING_KEY)
        there = post(
            as_ardian, body(scenario.booking_reply()), chronicum_id="lunch", key=BOOKING_KEY
        )
        assert here.status_code == there.status_code == 201
        assert here.json()["id"] != there.json()["id"]

    def test_an_empty_key_is_no_key(self, as_ardian):
        one = post(as_ardian, body(scenario.booking_reply()), key="")
        two = post(as_ardian, body(scenario.booking_reply()), key="")
        assert one.status_code == two.status_code == 201
        assert one.json()["id"] != two.json()["id"]

    @pytest.mark.parametrize(
        ("key", "said"),
        [
            # What a server hands Django for the UTF-8 bytes of "ключ-🍷": Latin-1.
            pytest.param("ключ-🍷".encode().decode("latin-1"), "must be ASCII", id="utf8"),
            pytest.param("ключ-🍷", "must be ASCII", id="unicode"),
            pytest.param("booking-reply-1,booking-reply-2", "sent once", id="two-headers"),
            pytest.param("booking-reply-1, booking-reply-1", "sent once", id="same-twice"),
            pytest.param("booking\r\nreply-1", "control characters", id="crlf"),
            pytest.param("booking\nreply-1", "control characters", id="lf"),
            pytest.param("booking\treply-1", "control characters", id="tab"),
            pytest.param("booking-reply-1\x7f", "control characters", id="del"),
        ],
    )
    def test_a_key_that_cannot_be_kept_as_sent_is_refused(self, as_ardian, key, said):
        response = post(as_ardian, GOOD, key=key)
        assert response.status_code == 400
        assert said in response.json()["detail"]
        assert response.json()["detail"].startswith("Idempotency-Key ")
        assert as_ardian.get(chronicum_url()).status_code == 404

    def test_printable_ascii_keys_are_kept(self, as_ardian):
        for key in ("booking-reply-1", "a b", "~!@#$%^&*()_+=`{}[]|\\:;\"'<>.?/"):
            first = post(as_ardian, GOOD, key=key)
            again = post(as_ardian, GOOD, key=key)
            assert (first.status_code, again.status_code) == (201, 200)

    def test_a_key_on_a_store_that_is_not_idempotent_is_501(self, as_ardian):
        with override_settings(CHRONICA={"STORE": "tests.teststores.PlainStore"}):
            response = post(as_ardian, body(scenario.booking_reply()), key=BOOKING_KEY)
            assert response.status_code == 501
            assert set(response.json()) == {"detail"}
            # Refused before anything was created.
            assert as_ardian.get(chronicum_url()).status_code == 404
            assert post(as_ardian, body(scenario.booking_reply())).status_code == 201


GOOD = body(scenario.booking_reply())


@pytest.mark.django_db
class TestInvalidInput:
    """Every invalid body and query is a 400 {"detail": ...}, and writes nothing."""

    @pytest.mark.parametrize(
        ("payload", "said"),
        [
            pytest.param({**GOOD, "content": 7}, "content must be a string", id="content-int"),
            pytest.param({**GOOD, "content": None}, "content must be a string", id="content-null"),
            pytest.param({**GOOD, "actor": ["booking"]}, "actor must be a string", id="actor-list"),
            pytest.param({**GOOD, "kind": 1}, "unknown kind", id="kind-int"),
            pytest.param({**GOOD, "kind": "memo"}, "unknown kind", id="kind-unknown"),
            pytest.param({**GOOD, "actor_kind": "robot"}, "unknown actor_kind", id="actor-kind"),
            pytest.param({**GOOD, "actor": ""}, "actor is empty", id="actor-empty"),
            pytest.param({**GOOD, "content": ""}, "content is empty", id="message-empty"),
            pytest.param({**GOOD, "actor": "b" * 256}, "longer than 255", id="actor-long"),
            pytest.param({**GOOD, "content": "RT-\x004821"}, "NUL", id="content-nul"),
            pytest.param({**GOOD, "actor": "book\x00ing"}, "NUL", id="actor-nul"),
            pytest.param({"actor_kind": "agent", "actor": "booking"}, "kind", id="no-kind"),
            pytest.param({"kind": "message"}, "actor_kind, actor", id="no-actor"),
            pytest.param({}, "missing", id="empty-object"),
            pytest.param("message", "JSON object", id="string"),
            pytest.param(None, "JSON object", id="null"),
            pytest.param(3, "JSON object", id="number"),
            pytest.param([[GOOD]], "actum 0: an actum must be a JSON object", id="nested"),
            pytest.param([GOOD, {}], "actum 1: missing field(s): kind", id="batch-missing"),
            pytest.param([GOOD, {**GOOD, "kind": "memo"}], "actum 1: unknown kind", id="batch"),
        ],
    )
    def test_an_invalid_actum(self, as_ardian, payload, said):
        response = as_ardian.post(acta_url(), json.dumps(payload), content_type="application/json")
        assert response.status_code == 400, response.content
        detail = response.json()["detail"]
        assert set(response.json()) == {"detail"}
        assert said in detail
        assert as_ardian.get(chronicum_url()).status_code == 404

    @pytest.mark.parametrize(
        "payload",
        [{**GOOD, "kind": "memo"}, {**GOOD, "actor_kind": "robot"}, {**GOOD, "content": ""}],
    )
    def test_the_librarys_message_comes_through_as_it_is(self, ardian, as_ardian, payload):
        with pytest.raises(InvalidActum) as refused:
            services.record_actum(str(ardian.pk), Actum(chronicum_id=CHRONICUM, **payload))
        response = post(as_ardian, payload)
        assert response.status_code == 400
        assert response.json() == {"detail": str(refused.value)}

    @pytest.mark.parametrize(
        "raw",
        [
            pytest.param(b'{"kind": "message",', id="cut-short"),
            pytest.param(b"{'kind': 'message'}", id="single-quotes"),
            pytest.param(b'{"kind": NaN}', id="nan"),
            pytest.param(b"\xff\xfe{}", id="not-utf8"),
            pytest.param(b"[" * 100_000 + b"]" * 100_000, id="nested-too-deep"),
        ],
    )
    def test_malformed_json(self, as_ardian, raw):
        response = as_ardian.post(acta_url(), raw, content_type="application/json")
        assert response.status_code == 400
        assert "JSON parse error" in response.json()["detail"]

    def test_a_lone_surrogate_is_not_text(self, as_ardian):
        raw = json.dumps({**GOOD, "content": "RT-4821 \ud800"})  # ensure_ascii keeps it escaped
        response = as_ardian.post(acta_url(), raw, content_type="application/json")
        assert response.status_code == 400
        assert "surrogate" in response.json()["detail"]

    def test_an_over_long_chronicum_id_in_the_url(self, as_ardian):
        response = post(as_ardian, GOOD, chronicum_id="d" * 256)
        assert response.status_code == 400
        assert "chronicum_id is longer than 255" in response.json()["detail"]
        assert as_ardian.get(chronicum_url("d" * 256)).status_code == 404

    def test_a_nul_in_the_url_reads_as_missing(self, as_ardian):
        assert as_ardian.get(chronicum_url("dinner\x00friday")).status_code == 404
        assert as_ardian.get(acta_url("dinner\x00friday")).status_code == 404
        assert post(as_ardian, GOOD, chronicum_id="dinner\x00friday").status_code == 400

    @pytest.mark.parametrize(
        ("key", "said"),
        [("k" * 256, "idempotency_key is longer than 255"), ("booking\x00reply", "NUL")],
    )
    def test_an_invalid_idempotency_key(self, as_ardian, key, said):
        response = post(as_ardian, GOOD, key=key)
        assert response.status_code == 400
        assert said in response.json()["detail"]

    def test_a_form_body_is_an_unsupported_media_type(self, as_ardian):
        response = as_ardian.post(acta_url(), GOOD, format="multipart")
        assert response.status_code == 415
        assert set(response.json()) == {"detail"}

    @pytest.mark.parametrize(
        ("query", "said"),
        [
            ("?kind=memo", "unknown kind 'memo'"),
            ("?kind=message,memo", "unknown kind 'memo'"),
            ("?kind=", "unknown kind ''"),
            ("?kind=message,", "unknown kind ''"),
            ("?kind=message,%20thought", "unknown kind ' thought'"),
            ("?last_n=", "last_n must be a 64-bit integer"),
            ("?last_n=%203", "last_n must be a 64-bit integer"),
            ("?actor_kind=robot", "unknown actor_kind 'robot'"),
            ("?last_n=three", "last_n must be a 64-bit integer"),
            ("?last_n=1.5", "last_n must be a 64-bit integer"),
            ("?last_n=1_000", "last_n must be a 64-bit integer"),
            ("?last_n=%D9%A3", "last_n must be a 64-bit integer"),  # an Arabic-Indic three
            ("?last_n=9223372036854775808", "last_n must be a 64-bit integer"),
            ("?last_n=" + "9" * 5000, "last_n must be a 64-bit integer"),
            ("?kind=%00", "unknown kind"),
        ],
    )
    def test_an_invalid_query(self, as_ardian, dinner, query, said):
        response = as_ardian.get(acta_url() + query)
        assert response.status_code == 400
        assert said in response.json()["detail"]

    def test_the_largest_last_n_is_all(self, as_ardian, dinner):
        assert window(as_ardian, "?last_n=9223372036854775807") == dinner

    def test_an_invalid_query_on_someone_elses_chronicum_is_still_400(self, as_rafa, dinner):
        # The query is checked before the owner, so it tells nothing about the ID.
        assert as_rafa.get(acta_url() + "?kind=memo").status_code == 400
        assert as_rafa.get(acta_url("never-existed") + "?kind=memo").status_code == 400


def closed_port() -> int:
    """A local TCP port where nothing listens."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


UNREACHABLE = {
    "postgresql": {
        "ENGINE": "django.db.backends.postgresql",
        "HOST": "127.0.0.1",
        "PORT": closed_port(),
        "NAME": "chronica",
        "USER": "postgres",
        "OPTIONS": {"connect_timeout": 5},
    },
    "sqlite": {"ENGINE": "django.db.backends.sqlite3", "NAME": "/nonexistent/chronica.sqlite3"},
}


@pytest.fixture(params=sorted(UNREACHABLE))
def unreachable_store(request):
    """CHRONICA's store on a database alias that cannot be connected to: a PostgreSQL port
    where nothing listens, or an SQLite file in a directory that does not exist."""
    alias = f"unreachable_{request.param}"
    configured = {**connections.settings, alias: UNREACHABLE[request.param]}
    settings_dict = connections.configure_settings(configured)[alias]
    # A connection of this thread only, not in settings.DATABASES: the test
    # framework would try to set up and flush a test database on it.
    wrapper = load_backend(settings_dict["ENGINE"]).DatabaseWrapper(settings_dict, alias)
    connections[alias] = wrapper
    store = {"STORE": "chronica.stores.db.DjangoStore", "STORE_OPTIONS": {"using": alias}}
    with override_settings(CHRONICA=store):
        yield
    wrapper.close()
    del connections[alias]


@pytest.mark.django_db
class TestOtherErrors:
    def test_a_database_error_on_a_retry_safe_request_is_a_json_503(self, as_ardian):
        # A backend terminated mid-request: a read and a keyed write may be
        # sent again as they are.
        with override_settings(CHRONICA={"STORE": f"{__name__}.LostConnectionStore"}):
            for response in (
                as_ardian.get(chronicum_url()),
                post(as_ardian, GOOD, key=BOOKING_KEY),
            ):
                assert response.status_code == 503
                assert response["Content-Type"] == "application/json"
                assert response["Retry-After"] == "5"
                assert "safe to retry" in response.json()["detail"]

    def test_a_database_error_on_an_unkeyed_write_is_a_json_500_that_says_so(self, as_ardian):
        with override_settings(CHRONICA={"STORE": f"{__name__}.LostConnectionStore"}):
            response = post(as_ardian, GOOD)

        assert response.status_code == 500
        assert response["Content-Type"] == "application/json"
        assert "Retry-After" not in response
        detail = response.json()["detail"]
        assert "may have been stored" in detail
        assert "Idempotency-Key" in detail

    def test_the_projects_own_value_error_is_not_a_400(self, as_ardian):
        with override_settings(CHRONICA={"OWNER_ID": f"{__name__}.broken_owner_id"}):
            for call in (
                lambda: as_ardian.get(chronicum_url()),
                lambda: as_ardian.get(acta_url()),
                lambda: post(as_ardian, GOOD),
            ):
                with pytest.raises(ValueError, match="invalid literal"):
                    call()

    def test_a_stores_value_error_is_not_a_400(self, as_ardian):
        with override_settings(CHRONICA={"STORE": f"{__name__}.BuggyStore"}):
            for call in (lambda: as_ardian.get(chronicum_url()), lambda: as_ardian.get(acta_url())):
                with pytest.raises(ValueError, match="invalid literal"):
                    call()

    def test_an_unreachable_database_is_a_503_to_retry(self, as_ardian, unreachable_store):
        for response in (
            as_ardian.get(chronicum_url()),
            as_ardian.get(acta_url()),
            post(as_ardian, GOOD),
            post(as_ardian, GOOD, key=BOOKING_KEY),
        ):
            assert response.status_code == 503
            assert response["Content-Type"] == "application/json"
            assert response["Retry-After"] == "5"
            assert response.json() == {"detail": "The database cannot be reached; try again later."}


@pytest.mark.django_db
class TestMethods:
    @pytest.mark.parametrize(
        ("method", "url"),
        [
            ("put", chronicum_url),
            ("patch", chronicum_url),
            ("put", acta_url),
            ("patch", acta_url),
            ("delete", acta_url),
        ],
    )
    def test_acta_are_never_edited(self, as_ardian, dinner, method, url):
        # An actum leaves only with its chronicum (DELETE on the chronicum).
        response = getattr(as_ardian, method)(url(), GOOD, format="json")
        assert response.status_code == 405
        assert window(as_ardian) == dinner

    def test_no_post_on_a_chronicum(self, as_ardian):
        assert as_ardian.post(chronicum_url(), GOOD, format="json").status_code == 405


@pytest.mark.django_db
class TestSignedIn:
    def calls(self, client: APIClient):
        return [
            client.get(chronicum_url()),
            client.get(acta_url()),
            post(client, GOOD),
            post(client, GOOD, key=BOOKING_KEY),
            post(client, [GOOD, GOOD]),
            client.get("/api/chronica/"),
            client.post("/api/chronica/", {}, format="json"),
            client.post("/api/chronica/", {"id": "lunch-saturday"}, format="json"),
            client.delete(chronicum_url()),
        ]

    def assert_refused_and_nothing_written(self, as_ardian, dinner):
        for response in self.calls(APIClient()):
            assert response.status_code in (401, 403)
            assert set(response.json()) == {"detail"}
        assert window(as_ardian) == dinner
        assert [c["id"] for c in as_ardian.get("/api/chronica/").json()["results"]] == [CHRONICUM]

    def test_anonymous_is_refused(self, as_ardian, dinner):
        self.assert_refused_and_nothing_written(as_ardian, dinner)

    def test_anonymous_is_refused_where_the_project_allows_anyone(self, as_ardian, dinner):
        allow_any = {"DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"]}
        with override_settings(REST_FRAMEWORK=allow_any):
            self.assert_refused_and_nothing_written(as_ardian, dinner)

    def test_the_projects_authentication_decides_401_or_403(self, ardian, dinner):
        client = APIClient()
        wrong = "Basic YXJkaWFuOndyb25n"  # ardian:wrong
        right = "Basic YXJkaWFuOmFyZGlhbi1wYXNzd29yZA=="  # ardian:ardian-password
        basic = "rest_framework.authentication.BasicAuthentication"
        token = "rest_framework.authentication.TokenAuthentication"
        session = "rest_framework.authentication.SessionAuthentication"
        for classes, challenge in [
            # DRF's default: session first, then basic. Basic can challenge.
            ([session, basic], 'Basic realm="api"'),
            ([basic], 'Basic realm="api"'),
            ([session, basic, token], 'Basic realm="api", Token'),
        ]:
            with override_settings(REST_FRAMEWORK={"DEFAULT_AUTHENTICATION_CLASSES": classes}):
                for response in (
                    client.get(chronicum_url()),
                    client.get(chronicum_url(), HTTP_AUTHORIZATION=wrong),
                    post(client, GOOD),
                ):
                    assert response.status_code == 401
                    assert response["WWW-Authenticate"] == challenge
                assert client.get(chronicum_url(), HTTP_AUTHORIZATION=right).status_code == 200

    def test_with_no_challenge_to_make_403(self, ardian, dinner):
        session = ["rest_framework.authentication.SessionAuthentication"]
        with override_settings(REST_FRAMEWORK={"DEFAULT_AUTHENTICATION_CLASSES": session}):
            for response in self.calls(APIClient()):
                assert response.status_code == 403
                assert "WWW-Authenticate" not in response

    def test_a_stricter_project_policy_applies(self, as_ardian, dinner):
        admins = {"DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAdminUser"]}
        with override_settings(REST_FRAMEWORK=admins):
            assert {r.status_code for r in self.calls(as_ardian)} == {403}
        assert window(as_ardian) == dinner
        assert [c["id"] for c in as_ardian.get("/api/chronica/").json()["results"]] == [CHRONICUM]


@pytest.mark.django_db
@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1024 * 1024)
def test_a_body_over_the_upload_limit_is_a_413_naming_the_setting(as_ardian):
    response = post(as_ardian, {**GOOD, "content": "x" * 2**20})
    assert response.status_code == 413
    assert response.json() == {
        "detail": "the request body is larger than DATA_UPLOAD_MAX_MEMORY_SIZE (1048576 bytes)"
    }
    assert as_ardian.get(chronicum_url()).status_code == 404


@pytest.mark.django_db
class TestUnknownQueryParameters:
    """A misspelt or unsupported parameter is a 400 naming it, not a silently
    unfiltered answer."""

    @pytest.mark.parametrize(
        ("query", "named"),
        [
            ("?actors=ardian", "actors"),
            ("?limit=3", "limit"),
            ("?kind=message&last=3", "last"),
            ("?actors=ardian&limit=3", "actors, limit"),
            ("?kinds=message", "kinds"),
        ],
    )
    def test_on_the_window(self, as_ardian, dinner, query, named):
        response = as_ardian.get(acta_url() + query)
        assert response.status_code == 400
        assert response.json() == {
            "detail": f"unknown query parameter(s): {named}"
            " (this call takes: actor, actor_kind, before, compacted, kind, last_n, max_tokens,"
            " whole_tool_calls)"
        }

    def test_on_the_chronicum_and_on_a_write(self, as_ardian, dinner):
        said = "unknown query parameter(s): kind (this call takes: none)"
        assert as_ardian.get(chronicum_url() + "?kind=message").json() == {"detail": said}
        response = as_ardian.post(acta_url() + "?kind=message", GOOD, format="json")
        assert response.status_code == 400
        assert response.json() == {"detail": said}
        assert window(as_ardian) == dinner

    def test_format_is_drfs_own(self, as_ardian, dinner):
        assert as_ardian.get(acta_url() + "?format=json&last_n=1").json() == dinner[-1:]
        assert as_ardian.get(chronicum_url() + "?format=api").status_code == 200

    @pytest.mark.parametrize("url", [acta_url, chronicum_url, lambda: "/api/chronica/"])
    def test_an_unknown_format_is_a_400_not_a_404(self, as_ardian, dinner, url):
        # DRF's own negotiation answers 404 (read as "no such chronicum").
        response = as_ardian.get(url() + "?format=yaml")
        assert response.status_code == 400
        assert response.json() == {"detail": "format='yaml' is not one of: json, api"}

    def test_signed_out_learns_nothing_about_parameters(self, dinner):
        assert APIClient().get(acta_url() + "?limit=3").status_code in (401, 403)


@pytest.mark.django_db
class TestRoutes:
    """Every route answers with and without its trailing slash, for every method: never
    a redirect, which clients follow as a GET and so lose a POST."""

    ROUTES = [
        pytest.param(lambda chronicum_id=None: "/api/chronica/", id="list"),
        pytest.param(chronicum_url, id="chronicum"),
        pytest.param(acta_url, id="acta"),
    ]

    def test_reverse_gives_the_slash(self):
        assert chronicum_url() == f"/api/chronica/{CHRONICUM}/"
        assert acta_url() == f"/api/chronica/{CHRONICUM}/acta/"

    def test_the_names_of_the_previous_release_still_reverse(self, as_ardian, dinner):
        # Projects' code calls reverse() on the names chronica's first release gave.
        for name, url in [("chronica:chronicum", chronicum_url()), ("chronica:acta", acta_url())]:
            assert reverse(name, args=[CHRONICUM]) == url
            assert reverse(name, kwargs={"chronicum_id": CHRONICUM}) == url
            assert as_ardian.get(reverse(name, args=[CHRONICUM])).status_code == 200
        assert reverse("chronica:acta", args=["dinner.friday"]) == acta_url("dinner.friday")

    @pytest.mark.parametrize("url", ROUTES)
    @pytest.mark.parametrize("method", ["get", "post", "put", "patch", "delete", "options"])
    def test_both_spellings_answer_alike(self, as_ardian, dinner, url, method):
        call = getattr(as_ardian, method)
        payload = {} if method in ("get", "options") else {"data": GOOD, "format": "json"}
        # A DELETE of each spelling deletes a chronicum of its own.
        other = "lunch-saturday" if method == "delete" else CHRONICUM
        post(as_ardian, GOOD, chronicum_id=other)
        with_slash, without = call(url(), **payload), call(url(other).rstrip("/"), **payload)
        assert without.status_code == with_slash.status_code
        assert not 300 <= with_slash.status_code < 400
        if method == "get":
            assert without.json() == with_slash.json()

    def test_a_post_without_the_slash_is_recorded(self, as_ardian, dinner):
        response = as_ardian.post(acta_url().rstrip("/"), GOOD, format="json")
        assert response.status_code == 201
        assert window(as_ardian)[-1] == response.json()

    def test_an_id_with_dots_is_an_id(self, as_ardian):
        assert post(as_ardian, GOOD, chronicum_id="dinner.friday").status_code == 201
        assert as_ardian.get(chronicum_url("dinner.friday")).json()["id"] == "dinner.friday"
        assert as_ardian.get("/api/chronica/dinner.friday").json()["id"] == "dinner.friday"

    def test_the_browsable_api_renders(self, as_ardian, dinner):
        pages = [
            ("/api/chronica/", CHRONICUM),
            (chronicum_url(), CHRONICUM),
            (acta_url(), "Rumah Teduh"),
        ]
        for url, shown in [*pages, *((url.rstrip("/"), shown) for url, shown in pages)]:
            response = as_ardian.get(url, HTTP_ACCEPT="text/html")
            assert response.status_code == 200
            assert shown in response.content.decode()
