"""A thousand followers of dinner-friday cost one read per write, and idle ones one
read per interval: followers of one chronicum in one event loop share their reads
(``chronica.follow``), on PostgreSQL (LISTEN) and on SQLite (polling) alike."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from asgiref.sync import sync_to_async
from django.db import connections

from chronica.services import Chronicarius
from chronica.stores.db import DjangoStore

from .. import scenario
from ..scenario import CHRONICUM, OWNER

pytestmark = pytest.mark.django_db(transaction=True)

FOLLOWERS = 60
DEADLINE = 60  # only reached when something is broken


class CountingStore(DjangoStore):
    """DjangoStore, counting the reads of what is new (both paths)."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def acta_after(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.reads += 1
        return super().acta_after(*args, **kwargs)

    async def aacta_after(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.reads += 1
        return await super().aacta_after(*args, **kwargs)


@pytest.fixture(autouse=True)
async def close_executor_connections():
    yield
    await sync_to_async(connections.close_all)()


async def _followers(chronicarius: Chronicarius, n: int) -> tuple[list[asyncio.Task], list]:
    got: list[list] = [[] for _ in range(n)]

    async def one(i: int) -> None:
        async for actum in chronicarius.afollow(OWNER, CHRONICUM):
            got[i].append(actum)

    tasks = [asyncio.ensure_future(one(i)) for i in range(n)]
    return tasks, got


async def _stop(tasks: list[asyncio.Task]) -> None:
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _settle(store: CountingStore, seconds: float) -> None:
    """Until the reads stop coming (every follower started and waits)."""
    async with asyncio.timeout(DEADLINE):
        while True:
            before = store.reads
            await asyncio.sleep(seconds)
            if store.reads == before:
                return


async def test_sixty_followers_share_the_read_of_each_write():
    store = CountingStore()
    # Polling only every 5 s: what wakes them is the write (or, on SQLite, the poll).
    interval = 5.0 if connections[store.alias].vendor == "postgresql" else 0.5
    chronicarius = Chronicarius(store, poll_interval=interval)
    await chronicarius.arecord_actum(OWNER, scenario.acta()[0])
    tasks, got = await _followers(chronicarius, FOLLOWERS)
    try:
        await _settle(store, 0.3)
        store.reads = 0
        written = [await chronicarius.arecord_actum(OWNER, a) for a in scenario.acta()[1:4]]
        async with asyncio.timeout(DEADLINE):
            while any(len(acta) < 3 for acta in got):
                await asyncio.sleep(0.02)
        assert all(acta == written for acta in got)
        # Without sharing: at least 60 reads a write. With it: a few reads in all
        # (followers woken by different NOTIFYs read apart).
        assert store.reads <= 4 * len(written), store.reads
    finally:
        await _stop(tasks)


async def test_idle_followers_poll_once_per_chronicum_and_interval():
    store = CountingStore()
    chronicarius = Chronicarius(store, poll_interval=0.2)
    await chronicarius.arecord_actum(OWNER, scenario.acta()[0])
    tasks, _ = await _followers(chronicarius, FOLLOWERS)
    try:
        async with asyncio.timeout(DEADLINE):
            while store.reads < FOLLOWERS:
                await asyncio.sleep(0.02)
        await asyncio.sleep(0.5)
        store.reads = 0
        await asyncio.sleep(2.0)  # ten intervals
        # One read a tick (two where a tick splits); unshared: 600.
        assert 0 < store.reads <= 25, store.reads
    finally:
        await _stop(tasks)


async def test_followers_with_other_filters_read_apart_and_each_gets_its_own():
    store = CountingStore()
    chronicarius = Chronicarius(store, poll_interval=0.1)
    await chronicarius.arecord_actum(OWNER, scenario.acta()[0])
    humans: list = []
    everyone: list = []

    async def follow(into: list, **filters) -> None:
        async for actum in chronicarius.afollow(OWNER, CHRONICUM, **filters):
            into.append(actum)

    tasks = [
        asyncio.ensure_future(follow(humans, actor_kinds=["human"])),
        asyncio.ensure_future(follow(everyone)),
    ]
    try:
        await asyncio.sleep(0.3)
        written = [await chronicarius.arecord_actum(OWNER, a) for a in scenario.acta()[1:]]
        async with asyncio.timeout(DEADLINE):
            while len(everyone) < len(written):
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.3)
        assert everyone == written
        assert humans == [a for a in written if a.actor_kind == "human"]
    finally:
        await _stop(tasks)
