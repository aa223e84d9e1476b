"""A follower learns of a redaction: the actum comes again, as ``ActumRedacted``, once;
the API's stream sends it as ``event: redacted`` without moving its position."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.db import connections

from chronica import Actum
from chronica.api.stream import event
from chronica.follow import ActumRedacted, redacted_event
from chronica.services import Chronicarius

from .. import scenario
from ..scenario import CHRONICUM, OWNER

DEADLINE = 60


@pytest.fixture(autouse=True)
async def close_executor_connections():
    yield
    await sync_to_async(connections.close_all)()


@pytest.fixture
def chronicarius(store) -> Chronicarius:
    return Chronicarius(store, poll_interval=0.02)


async def test_a_redaction_while_following_comes_once(chronicarius):
    record = sync_to_async(chronicarius.record_acta)
    redact = sync_to_async(chronicarius.redact_actum)
    stored = await record(OWNER, scenario.acta()[:3])
    follower = chronicarius.afollow(OWNER, CHRONICUM, after=stored[-1].id)
    got: list[Actum] = []

    async def take(n: int) -> None:
        async for actum in follower:
            got.append(actum)
            if len(got) == n:
                return

    task = asyncio.ensure_future(take(3))
    for _ in range(30):
        await asyncio.sleep(0.01)
    await redact(OWNER, CHRONICUM, stored[1].id, reason="pasted a secret")
    await redact(OWNER, CHRONICUM, stored[1].id, reason="again")
    later = await record(OWNER, scenario.acta()[3:5])
    async with asyncio.timeout(DEADLINE):
        await task
    await follower.aclose()
    redactions = [a for a in got if isinstance(a, ActumRedacted)]
    assert [a.id for a in redactions] == [stored[1].id]
    assert redactions[0].content == ""
    assert redactions[0].redacted.reason == "pasted a secret"
    assert [a.id for a in got if not isinstance(a, ActumRedacted)] == [a.id for a in later]


@pytest.mark.slow
async def test_a_redaction_from_before_the_follow_is_not_news(chronicarius):
    stored = await sync_to_async(chronicarius.record_acta)(OWNER, scenario.acta()[:3])
    await sync_to_async(chronicarius.redact_actum)(OWNER, CHRONICUM, stored[0].id)
    await asyncio.sleep(2.5)  # past the margin a follower looks back
    follower = chronicarius.afollow(OWNER, CHRONICUM, after=stored[-1].id)
    task = asyncio.ensure_future(anext(follower))
    for _ in range(30):
        await asyncio.sleep(0.01)
    later = await sync_to_async(chronicarius.record_actum)(OWNER, scenario.acta()[3])
    async with asyncio.timeout(DEADLINE):
        first = await task
    await follower.aclose()
    assert first == later


def test_the_stream_sends_a_redaction_without_an_id():
    actum = Actum(
        chronicum_id=CHRONICUM, kind="message", actor_kind="human", actor="ardian", id="a1"
    )
    assert event(actum).startswith(b"id: a1\n")
    sent = event(redacted_event(actum))
    assert sent.startswith(b"event: redacted\ndata: ")
    assert b"id:" not in sent
