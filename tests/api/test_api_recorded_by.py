"""``recorded_by`` on the wire (issue 21): every actum the API gives says who wrote it:
``"credential:<key ID>"`` for an agent's credential, ``"owner"`` for the person signed
in as themselves, null for a row a seed-only writer inserted. Over real HTTP (uvicorn
serving the test project over ASGI): writes, batches, keyed replays, the window and the
stream's events."""

from __future__ import annotations

import datetime as dt
import http.client
import json
import time

import pytest
from django.db import connection

from chronica import services

from ..scenario import CHRONICUM
from .test_follow_stream import STREAM, basic, fast_polls, opened, server

__all__ = ["fast_polls", "server"]  # fixtures

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.urls("tests.follow_urls")]

ACTA = f"/api/chronica/{CHRONICUM}/acta/"
ASKED = {"kind": "message", "actor_kind": "human", "actor": "ardian", "content": "Book it."}
HELD = {"kind": "message", "content": "Held: Rumah Teduh, 7pm."}


def send(server: str, method: str, path: str, headers: dict[str, str], payload=None):
    """One request over HTTP: the status, the headers and the JSON answer."""
    host, port = server.split(":")
    link = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        body = None if payload is None else json.dumps(payload).encode()
        sent = {**headers, **({} if body is None else {"Content-Type": "application/json"})}
        link.request(method, path, body=body, headers=sent)
        answer = link.getresponse()
        return answer.status, answer, json.loads(answer.read())
    finally:
        link.close()


def seed_only_write(content: str) -> None:
    """A writer that knows only the seed's columns: no ``recorded_by``."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at)"
            " VALUES (%s, %s, 'message', 'human', 'ardian', %s, %s)",
            [f"seed-{content}", CHRONICUM, content, dt.datetime.now(dt.UTC)],
        )


@pytest.fixture
def booking(ardian) -> tuple[dict[str, str], str]:
    """The booking agent's Authorization header and its ``recorded_by``."""
    issued = services.issue_credential(services.owner_id_for(ardian), "booking")
    return {"Authorization": f"Bearer {issued.secret}"}, f"credential:{issued.info.key_id}"


def test_each_write_answer_says_who_wrote_it(server, ardian, booking):
    as_booking, by_booking = booking
    status, _, person = send(server, "POST", ACTA, basic("ardian"), ASKED)
    assert (status, person["actor"], person["recorded_by"]) == (201, "ardian", "owner")
    status, _, agent = send(server, "POST", ACTA, as_booking, HELD)
    assert (status, agent["actor"], agent["recorded_by"]) == (201, "booking", by_booking)

    batch = [HELD, {**HELD, "content": "Confirmed."}]
    status, _, first = send(server, "POST", ACTA, {**as_booking, "Idempotency-Key": "b1"}, batch)
    assert status == 201
    assert [a["recorded_by"] for a in first] == [by_booking, by_booking]
    status, answer, again = send(
        server, "POST", ACTA, {**as_booking, "Idempotency-Key": "b1"}, batch
    )
    assert (status, answer.getheader("Idempotent-Replayed")) == (200, "true")
    assert again == first
    # The person replaying the agent's key gets what the agent stored, as it was stored.
    status, _, by_person = send(
        server, "POST", ACTA, {**basic("ardian"), "Idempotency-Key": "b1"}, ASKED
    )
    assert (status, by_person["recorded_by"]) == (200, by_booking)


def test_the_window_and_the_stream_say_who_wrote_each(server, ardian, booking):
    as_booking, by_booking = booking
    assert send(server, "POST", ACTA, basic("ardian"), ASKED)[0] == 201
    stream = opened(server, STREAM, **basic("ardian"))
    try:
        # The follower takes its position as the stream starts; give it the moment.
        time.sleep(0.3)
        assert send(server, "POST", ACTA, as_booking, HELD)[0] == 201
        seed_only_write("Thanks.")
        streamed = stream.acta(2)
    finally:
        stream.close()
    assert [(a["actor"], a["recorded_by"]) for a in streamed] == [
        ("booking", by_booking),
        ("ardian", None),
    ]
    status, _, window = send(server, "GET", ACTA, basic("ardian"))
    assert status == 200
    assert [(a["content"], a["recorded_by"]) for a in window] == [
        ("Book it.", "owner"),
        ("Held: Rumah Teduh, 7pm.", by_booking),
        ("Thanks.", None),
    ]
    assert window[1:] == streamed
    status, _, as_agent = send(server, "GET", ACTA, as_booking)
    assert (status, as_agent) == (200, window)
