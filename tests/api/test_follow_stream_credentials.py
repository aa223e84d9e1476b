"""A stream an agent's credential opened ends once the credential is revoked or has
expired, checked at least every heartbeat, whether the stream is quiet or busy; the
person's own streams and a valid credential's go on."""

from __future__ import annotations

import datetime as dt
import threading
import time

import pytest

from chronica import services
from chronica.models import AgentCredential

from .. import scenario
from ..follow_urls import StreamingChronicumViewSet
from .test_follow_stream import STREAM, basic, fast_polls, opened, owner, server

__all__ = ["fast_polls", "server"]  # fixtures

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.urls("tests.follow_urls")]

HEARTBEAT = 0.2
ENDED = ": credential revoked or expired"


@pytest.fixture(autouse=True)
def quick_heartbeat(monkeypatch):
    monkeypatch.setattr(StreamingChronicumViewSet, "stream_heartbeat", HEARTBEAT)


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def until_the_end(stream, within: float = 50 * HEARTBEAT) -> list[str]:
    """Every line the stream sends until it ends, or ``within`` seconds have passed (a
    bound that only stops a stream that never ends from hanging the run)."""
    lines = []
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        line = stream.response.readline()
        if not line:
            return lines
        lines.append(line.decode().rstrip("\n"))
    return [*lines, "(still streaming)"]


def revoke(key_id: str) -> None:
    assert services.revoke_credential(key_id)


def expire(key_id: str) -> None:
    past = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
    AgentCredential.objects.filter(key_id=key_id).update(expires_at=past)


@pytest.mark.parametrize("end", [revoke, expire], ids=["revoked", "expired"])
def test_a_quiet_stream_ends(server, ardian, end):
    services.record_actum(owner(ardian), scenario.acta()[0])
    issued = services.issue_credential(owner(ardian), "booking", expires_in="1h")
    stream = opened(server, STREAM, **bearer(issued.secret))
    try:
        assert stream.next_event() == {":": "heartbeat"}  # open, and asked again
        end(issued.info.key_id)
        lines = until_the_end(stream)
    finally:
        stream.close()
    assert lines[-2:] == [ENDED, ""]


def test_a_busy_stream_ends_too(server, ardian):
    """Acta keep coming, so no heartbeat is due: the credential is asked all the same."""
    services.record_actum(owner(ardian), scenario.acta()[0])
    issued = services.issue_credential(owner(ardian), "booking")
    stream = opened(server, STREAM, **bearer(issued.secret))
    stop = threading.Event()

    def write() -> None:
        while not stop.is_set():
            services.record_actum(owner(ardian), scenario.booking_reply())
            time.sleep(HEARTBEAT / 4)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert stream.acta(3)
        revoke(issued.info.key_id)
        lines = until_the_end(stream)
    finally:
        stop.set()
        writer.join()
        stream.close()
    assert lines[-2:] == [ENDED, ""]
    assert ": heartbeat" not in lines


def test_a_valid_credential_and_the_person_stream_on(server, ardian):
    services.record_actum(owner(ardian), scenario.acta()[0])
    issued = services.issue_credential(owner(ardian), "booking")
    other = services.issue_credential(owner(ardian), "search")
    streams = [opened(server, STREAM, **bearer(issued.secret)), opened(server, **basic("ardian"))]
    try:
        revoke(other.info.key_id)  # another credential's revocation ends nothing here
        deadline = time.monotonic() + 5 * HEARTBEAT
        while time.monotonic() < deadline:
            for stream in streams:
                assert stream.next_event() == {":": "heartbeat"}
        written = services.record_actum(owner(ardian), scenario.booking_reply())
        for stream in streams:
            assert stream.acta(1)[0]["id"] == written.id
    finally:
        for stream in streams:
            stream.close()


def test_asking_often_while_the_follower_reads(server, ardian, monkeypatch):
    """The credential is asked while the follower's reads are under way (on SQLite they
    run in asgiref's one shared thread): the stream stays open and loses nothing."""
    from django.test import override_settings

    monkeypatch.setattr(StreamingChronicumViewSet, "stream_heartbeat", 0.01)
    first = services.record_actum(owner(ardian), scenario.acta()[0])
    issued = services.issue_credential(owner(ardian), "booking")
    with override_settings(CHRONICA={"FOLLOW_POLL_INTERVAL": 0.005}):
        services.reset_chronicarius()
        stream = opened(server, f"{STREAM}?after={first.id}", **bearer(issued.secret))
        try:
            written = []
            for actum in scenario.acta()[1:] * 3:
                written.append(services.record_actum(owner(ardian), actum).id)
                time.sleep(0.1)
            assert [a["id"] for a in stream.acta(len(written))] == written
        finally:
            stream.close()
    services.reset_chronicarius()
