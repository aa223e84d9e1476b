"""The session lifecycle over HTTP: ardian starts chronica, lists them a page at a
time, and deletes dinner-friday; rafa never sees, lists or deletes one of his."""

from __future__ import annotations

import base64
import re
import threading
import time

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from chronica import services

from .. import scenario
from ..scenario import CHRONICUM
from .test_api import GOOD, acta_url, as_ardian, as_rafa, body, chronicum_url, post, window

__all__ = ["as_ardian", "as_rafa"]  # fixtures

LIST_URL = "/api/chronica/"


def start(client: APIClient, payload=None, **kwargs):
    return client.post(LIST_URL, payload, format="json", **kwargs)


def listing(client: APIClient, query: str = "") -> dict:
    response = client.get(LIST_URL + query)
    assert response.status_code == 200, response.content
    return response.json()


def every_page(client: APIClient, url: str) -> list[list[str]]:
    """The IDs of each page, following ``next`` to the end."""
    pages = []
    while url:
        response = client.get(url)
        assert response.status_code == 200, response.content
        pages.append([c["id"] for c in response.json()["results"]])
        url = response.json()["next"]
    return pages


def flat(pages: list[list[str]]) -> list[str]:
    return [item for page in pages for item in page]


def cursor(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.django_db
class TestStart:
    def test_a_new_chronicum_gets_an_unguessable_id(self, ardian, as_ardian):
        response = start(as_ardian, {})
        assert response.status_code == 201
        chronicum = response.json()
        assert re.fullmatch("[0-9a-f]{32}", chronicum["id"])
        assert chronicum["owner_id"] == str(ardian.pk)
        assert chronicum["started_at"] == chronicum["last_activity_at"]
        location = response["Location"]
        assert location == f"http://testserver/api/chronica/{chronicum['id']}/"
        assert as_ardian.get(location).json() == chronicum
        assert window(as_ardian, chronicum_id=chronicum["id"]) == []

    @pytest.mark.parametrize("payload", [None, {"id": None}])
    def test_no_body_or_a_null_id_mints_one(self, as_ardian, payload):
        response = start(as_ardian, payload)
        assert response.status_code == 201
        assert len(response.json()["id"]) == 32

    def test_each_start_is_a_new_chronicum(self, as_ardian):
        ids = {start(as_ardian, {}).json()["id"] for _ in range(5)}
        assert len(ids) == 5

    def test_dinner_friday_by_name_then_its_acta(self, ardian, as_ardian):
        response = start(as_ardian, {"id": CHRONICUM})
        assert response.status_code == 201
        assert response.json()["id"] == CHRONICUM
        assert response["Location"].endswith(chronicum_url())
        assert post(as_ardian, GOOD).status_code == 201
        assert [a["content"] for a in window(as_ardian)] == [scenario.BOOKING_REPLY]

    def test_a_taken_id_is_409_whoever_took_it(self, as_ardian, as_rafa):
        assert start(as_ardian, {"id": CHRONICUM}).status_code == 201
        again, rafas = start(as_ardian, {"id": CHRONICUM}), start(as_rafa, {"id": CHRONICUM})
        assert again.status_code == rafas.status_code == 409
        assert again.json() == rafas.json() == {"detail": "That chronicum ID is taken."}
        # Taken by a first write too.
        post(as_ardian, GOOD, chronicum_id="lunch-saturday")
        assert start(as_rafa, {"id": "lunch-saturday"}).status_code == 409

    @pytest.mark.parametrize(
        ("payload", "said"),
        [
            pytest.param({"id": ""}, "chronicum_id is empty", id="empty"),
            pytest.param({"id": " dinner"}, "white space", id="space"),
            pytest.param({"id": "d" * 256}, "longer than 255", id="long"),
            pytest.param({"id": "dinner\x00friday"}, "NUL", id="nul"),
            pytest.param({"id": "dinner\nfriday"}, "control", id="newline"),
            pytest.param({"id": ".."}, "URL", id="dots"),
            pytest.param({"id": "dinner/friday"}, "'/'", id="slash"),
            pytest.param({"id": 7}, "id must be a string, not a number", id="number"),
            pytest.param({"id": ["dinner"]}, "id must be a string, not an array", id="list"),
            pytest.param({"ID": CHRONICUM}, "unknown field(s): ID (the body takes: id)", id="ID"),
            pytest.param([], "must be a JSON object", id="array"),
            pytest.param("dinner-friday", "must be a JSON object", id="string"),
        ],
    )
    def test_a_bad_id_is_a_400(self, as_ardian, payload, said):
        response = start(as_ardian, payload)
        assert response.status_code == 400, response.content
        assert said in response.json()["detail"]
        assert listing(as_ardian)["results"] == []

    def test_without_the_trailing_slash(self, as_ardian):
        response = as_ardian.post(LIST_URL.rstrip("/"), {"id": CHRONICUM}, format="json")
        assert response.status_code == 201
        assert as_ardian.get(chronicum_url()).status_code == 200

    def test_no_query_parameters(self, as_ardian):
        response = as_ardian.post(LIST_URL + "?id=dinner", {}, format="json")
        assert response.status_code == 400
        assert response.json()["detail"].startswith("unknown query parameter(s): id")


@pytest.mark.django_db
class TestList:
    def test_latest_activity_first_and_only_ones_own(self, as_ardian, as_rafa):
        for chronicum_id in ("breakfast", "lunch", CHRONICUM):
            post(as_ardian, GOOD, chronicum_id=chronicum_id)
        post(as_rafa, GOOD, chronicum_id="rafa-lunch")
        page = listing(as_ardian)
        assert [c["id"] for c in page["results"]] == [CHRONICUM, "lunch", "breakfast"]
        assert page["next"] is None
        post(as_ardian, GOOD, chronicum_id="breakfast")
        assert [c["id"] for c in listing(as_ardian)["results"]] == [
            "breakfast",
            CHRONICUM,
            "lunch",
        ]
        assert [c["id"] for c in listing(as_rafa)["results"]] == ["rafa-lunch"]

    def test_nothing_yet(self, as_ardian):
        assert listing(as_ardian) == {"results": [], "next": None}

    def test_a_page_holds_100_unless_told(self, ardian, as_ardian):
        for n in range(101):
            services.create_chronicum(str(ardian.pk), f"session-{n:03}")
        first = listing(as_ardian)
        assert len(first["results"]) == 100
        assert first["next"].startswith("http://testserver/api/chronica/?cursor=")
        last = as_ardian.get(first["next"]).json()
        assert [c["id"] for c in last["results"]] == ["session-000"]
        assert last["next"] is None

    def test_pages_keep_their_size_and_cover_everything_once(self, ardian, as_ardian):
        for n in range(10):
            services.create_chronicum(str(ardian.pk), f"session-{n}")
        everything = [c["id"] for c in listing(as_ardian)["results"]]
        pages = every_page(as_ardian, LIST_URL + "?limit=3")
        assert [len(p) for p in pages] == [3, 3, 3, 1]
        assert flat(pages) == everything
        # A last page that is full says so: no next, no empty page after it.
        assert [len(p) for p in every_page(as_ardian, LIST_URL + "?limit=5")] == [5, 5]
        assert every_page(as_ardian, LIST_URL + "?limit=10") == [everything]

    def test_the_largest_page(self, ardian, as_ardian):
        for n in range(1001):
            services.create_chronicum(str(ardian.pk), f"session-{n:04}")
        pages = every_page(as_ardian, LIST_URL + "?limit=1000")
        assert [len(p) for p in pages] == [1000, 1]
        services.delete_chronicum(str(ardian.pk), pages[1][0])
        assert [len(p) for p in every_page(as_ardian, LIST_URL + "?limit=1000")] == [1000]

    def test_the_next_url_keeps_the_query_and_the_spelling(self, ardian, as_ardian):
        for n in range(3):
            services.create_chronicum(str(ardian.pk), f"session-{n}")
        page = as_ardian.get(LIST_URL.rstrip("/") + "?format=json&limit=2").json()
        assert page["next"].startswith("http://testserver/api/chronica?")
        assert "format=json" in page["next"]
        assert "limit=2" in page["next"]

    def test_a_chronicum_written_between_pages_moves_to_the_front(self, ardian, as_ardian):
        for n in range(6):
            services.create_chronicum(str(ardian.pk), f"session-{n}")
        first = listing(as_ardian, "?limit=3")
        seen = [c["id"] for c in first["results"]]
        post(as_ardian, GOOD, chronicum_id=seen[0])
        post(as_ardian, GOOD, chronicum_id="new-one")
        rest = every_page(as_ardian, first["next"])
        # Neither is listed again: each is now before the place the cursor holds.
        assert flat(rest) == ["session-2", "session-1", "session-0"]

    @pytest.mark.parametrize(
        ("query", "said"),
        [
            ("?limit=0", "limit must be from 1 to 1000, not 0"),
            ("?limit=1001", "limit must be from 1 to 1000, not 1001"),
            ("?limit=-1", "limit must be from 1 to 1000"),
            ("?limit=ten", "limit must be a 64-bit integer"),
            ("?limit=", "limit must be a 64-bit integer"),
            ("?offset=100", "unknown query parameter(s): offset (this call takes: cursor, limit)"),
            ("?cursor=", "cursor is not one this API gave"),
            ("?cursor=dinner-friday", "cursor is not one this API gave"),
            ("?cursor=" + cursor(b"not json"), "cursor is not one this API gave"),
            ("?cursor=" + cursor(b'["2026-05-01T19:00:00+00:00"]'), "cursor is not one"),
            ("?cursor=" + cursor(b'["2026-05-01T19:00:00", "x"]'), "cursor is not one"),
            ("?cursor=" + cursor(b'["2026-05-01T19:00:00Z", 7]'), "cursor is not one"),
            ("?cursor=" + cursor(b'["friday", "x"]'), "cursor is not one"),
            ("?cursor=" + cursor(b'["0001-01-01T00:00:00+14:00", "x"]'), "cursor is not one"),
            ("?cursor=" + cursor(b'["2026-05-01T19:00:00Z", "x\\u0000"]'), "cursor is not one"),
            ("?cursor=" + cursor(b'["2026-05-01T19:00:00Z", "' + b"x" * 256 + b'"]'), "cursor"),
            ("?cursor=" + cursor(b"\xff\xfe"), "cursor is not one this API gave"),
        ],
    )
    def test_a_bad_limit_or_cursor_is_a_400(self, as_ardian, query, said):
        response = as_ardian.get(LIST_URL + query)
        assert response.status_code == 400, response.content
        assert said in response.json()["detail"]

    def test_a_cursor_is_a_place_not_a_key_to_someone_elses(self, ardian, as_ardian, as_rafa):
        for n in range(3):
            services.create_chronicum(str(ardian.pk), f"session-{n}")
        ardians_next = listing(as_ardian, "?limit=1")["next"]
        assert as_rafa.get(ardians_next).json() == {"results": [], "next": None}

    def test_a_store_that_cannot_list_is_a_501(self, as_ardian):
        with override_settings(CHRONICA={"STORE": "tests.teststores.PlainStore"}):
            response = as_ardian.get(LIST_URL)
        assert response.status_code == 501
        assert response.json() == {"detail": "This server's chronica store cannot do that."}


@pytest.mark.django_db
class TestDelete:
    @pytest.fixture
    def dinner(self, as_ardian):
        return [post(as_ardian, body(actum)).json() for actum in scenario.acta()]

    def test_dinner_friday_and_its_acta_are_gone(self, as_ardian, dinner):
        response = as_ardian.delete(chronicum_url())
        assert response.status_code == 204
        assert response.content == b""
        assert as_ardian.get(chronicum_url()).status_code == 404
        assert as_ardian.get(acta_url()).status_code == 404
        assert listing(as_ardian)["results"] == []
        # The ID is free again; its old acta do not come back.
        assert post(as_ardian, GOOD).status_code == 201
        assert [a["content"] for a in window(as_ardian)] == [scenario.BOOKING_REPLY]

    def test_someone_elses_looks_like_a_missing_one(self, as_ardian, as_rafa, dinner):
        theirs = as_rafa.delete(chronicum_url())
        missing = as_rafa.delete(chronicum_url("never-existed"))
        read = as_rafa.get(chronicum_url())
        assert theirs.status_code == missing.status_code == read.status_code == 404
        assert theirs.content == missing.content == read.content
        assert window(as_ardian) == dinner

    def test_twice_is_404_the_second_time(self, as_ardian, dinner):
        assert as_ardian.delete(chronicum_url()).status_code == 204
        assert as_ardian.delete(chronicum_url()).status_code == 404

    def test_without_the_trailing_slash(self, as_ardian, dinner):
        assert as_ardian.delete(chronicum_url().rstrip("/")).status_code == 204
        assert as_ardian.get(chronicum_url()).status_code == 404

    @pytest.mark.parametrize("chronicum_id", ["dinner\x00friday", "d" * 256])
    def test_an_id_no_store_holds_is_404(self, as_ardian, dinner, chronicum_id):
        assert as_ardian.delete(chronicum_url(chronicum_id)).status_code == 404

    def test_a_store_that_cannot_delete_is_a_501(self, as_ardian):
        with override_settings(CHRONICA={"STORE": "tests.teststores.PlainStore"}):
            assert post(as_ardian, GOOD).status_code == 201
            response = as_ardian.delete(chronicum_url())
            assert response.status_code == 501
            assert as_ardian.get(chronicum_url()).status_code == 200


# -- with other clients writing at the same time, on the real database ----------


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def run_threads(targets) -> list[BaseException]:
    """Run each target in a thread of its own; the errors they raised."""
    errors: list[BaseException] = []

    def guarded(target):
        def run():
            try:
                target()
            except BaseException as exc:  # reported by the test, not lost in the thread
                errors.append(exc)
            finally:
                from django.db import connections

                connections.close_all()

        return run

    threads = [threading.Thread(target=guarded(t)) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread did not finish"
    return errors


@pytest.mark.django_db(transaction=True)
def test_pages_cover_every_chronicum_once_while_rafa_writes(ardian, rafa):
    owner = str(ardian.pk)
    for n in range(60):
        services.create_chronicum(owner, f"ardian-{n:02}")
    expected = [c["id"] for c in listing(client_for(ardian), "?limit=1000")["results"]]
    assert len(expected) == 60
    paged = threading.Event()
    pages: list[list[str]] = []
    writes: list[int] = []

    def after_a_write(seen: int) -> int:
        """Wait until rafa has stored another actum (so every page is read between writes)."""
        deadline = time.monotonic() + 30
        while len(writes) <= seen and time.monotonic() < deadline:
            time.sleep(0.002)
        return len(writes)

    def ardian_pages():
        client, seen = client_for(ardian), 0
        try:
            for _ in range(3):
                ids, url = [], LIST_URL + "?limit=7"
                while url:
                    seen = after_a_write(seen)
                    response = client.get(url)
                    assert response.status_code == 200, response.content
                    ids += [c["id"] for c in response.json()["results"]]
                    url = response.json()["next"]
                pages.append(ids)
        finally:
            paged.set()

    def rafa_writes():
        client, n = client_for(rafa), 0
        while not paged.is_set():
            chronicum_id = f"rafa-{n % 15}"
            assert post(client, GOOD, chronicum_id=chronicum_id).status_code == 201
            if n % 5 == 0:
                assert start(client, {}).status_code == 201
            writes.append(n)
            n += 1

    assert run_threads([ardian_pages, rafa_writes, rafa_writes]) == []
    assert pages == [expected] * 3
    # 3 rounds of 9 pages, each read after another of rafa's writes
    assert len(writes) >= 27


@pytest.mark.django_db(transaction=True)
def test_a_delete_while_four_clients_write(ardian):
    """Every actum a writer was told is stored either went with the chronicum (written
    before the delete) or is in the chronicum its writers created again (after it)."""
    writers, per_writer = 4, 30
    assert post(client_for(ardian), GOOD).status_code == 201
    written = threading.Semaphore(0)
    deleted = threading.Event()
    told: list[list[tuple[str, bool]]] = [[] for _ in range(writers)]
    answers: list[int] = []

    def writer(n):
        def write():
            client = client_for(ardian)
            for i in range(per_writer):
                if i == per_writer - 5:
                    # The last 5 of each writer wait for the delete: on SQLite the
                    # writers could otherwise all finish before the delete got its lock.
                    assert deleted.wait(60), "the delete never came"
                after_delete = deleted.is_set()
                response = post(client, {**GOOD, "content": f"writer {n}, actum {i}"})
                answers.append(response.status_code)
                assert response.status_code == 201, response.content
                told[n].append((response.json()["id"], after_delete))
                written.release()

        return write

    def deleter():
        for _ in range(writers * per_writer // 3):
            written.acquire()
        response = client_for(ardian).delete(chronicum_url())
        answers.append(response.status_code)
        assert response.status_code == 204, response.content
        deleted.set()

    assert run_threads([deleter, *(writer(n) for n in range(writers))]) == []
    assert set(answers) == {201, 204}
    kept = {a["id"] for a in window(client_for(ardian))}
    assert kept <= {actum_id for mine in told for actum_id, _ in mine}
    for mine in told:
        present = [actum_id in kept for actum_id, _ in mine]
        # Gone up to the delete, kept from it on: a writer's acta after the delete
        # are all in the chronicum created again, those before all went with it.
        assert present == sorted(present)
        assert all(actum_id in kept for actum_id, after in mine if after)
    # The delete did take some (at least the third written before it started), and
    # writes did start after it.
    assert len(kept) <= writers * per_writer * 2 // 3
    assert any(after for mine in told for _, after in mine)
