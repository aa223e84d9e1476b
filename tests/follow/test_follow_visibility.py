"""The visibility rule: an actum never becomes visible after a newer actum of its chronicum.

A follower resumes after the last actum it saw. That misses nothing only if, within a
chronicum, acta become visible in write (seq) order. chronica's write locks the
chronicum's row before its INSERT draws a seq, in the same statement, and holds the
lock until it commits: the next write of that chronicum draws its seq after the
previous one is visible.

The first tests show the mechanism and what the rule protects against; the last one
is the proof the issue asks for: 8 writers, 3 followers that stop and resume at random
points, every follower sees every actum exactly once in write order. It runs
``CHRONICA_FOLLOW_ROUNDS`` times (PostgreSQL: 20 by default, SQLite: 3). When it was
written, the same test with writes that draw their seq before they lock (an INSERT,
then the UPDATE of the chronicum, in one transaction) failed in 10 rounds of 10.
"""

from __future__ import annotations

import asyncio
import os
import random
import threading
import time
from collections.abc import Callable

import pytest
from asgiref.sync import sync_to_async
from django.db import connection, connections, transaction

from chronica import Actum, ActumKind, services
from chronica.services import Chronicarius
from chronica.stores.db import DjangoStore

from .. import scenario
from ..database import server_connection
from ..scenario import CHRONICUM, OWNER

pytestmark = pytest.mark.django_db(transaction=True)

DEADLINE = 120  # seconds; reached only when something is broken


@pytest.fixture(autouse=True)
def fresh_chronicarius():
    services.reset_chronicarius()
    yield
    services.reset_chronicarius()


@pytest.fixture(autouse=True)
async def close_executor_connections():
    yield
    await sync_to_async(connections.close_all)()


@pytest.fixture
def postgres():
    if connection.vendor != "postgresql":
        pytest.skip("row locks and concurrent snapshots: the race exists on PostgreSQL only")


def in_thread(work: Callable[[], object]) -> threading.Thread:
    def run() -> None:
        try:
            work()
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.01)


def a_write_waits_on_a_lock() -> bool:
    with server_connection() as probe:
        row = probe.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock' AND (query LIKE %s OR query LIKE %s)",
            ["%INSERT INTO acta%", "%chronica_record_act%"],  # a statement or the function
        ).fetchone()
    return bool(row and row[0])


def thought(n: int, actor: str = "planner") -> Actum:
    return Actum(
        chronicum_id=CHRONICUM,
        kind=ActumKind.THOUGHT,
        actor_kind="agent",
        actor=actor,
        content=f"{actor}, turn {n}",
    )


async def test_a_write_draws_its_seq_only_after_the_write_before_it_is_visible(postgres):
    first = await services.arecord_actum(OWNER, scenario.acta()[0])
    follower = services.afollow(OWNER, CHRONICUM, after=first.id)
    holding, release = threading.Event(), threading.Event()
    stored: dict[str, Actum] = {}

    def concierge() -> None:
        # The concierge's write sits in the app's open transaction.
        with transaction.atomic():
            stored["concierge"] = services.record_actum(OWNER, scenario.acta()[1])
            holding.set()
            release.wait(DEADLINE)

    def booking() -> None:
        stored["booking"] = services.record_actum(OWNER, scenario.booking_reply())

    slow = in_thread(concierge)
    await asyncio.to_thread(holding.wait, DEADLINE)
    fast = in_thread(booking)
    await asyncio.to_thread(until, a_write_waits_on_a_lock, "the booking agent's write to wait")
    assert await services.aget_acta(OWNER, CHRONICUM) == [first]

    release.set()
    await asyncio.to_thread(slow.join)
    await asyncio.to_thread(fast.join)
    async with asyncio.timeout(DEADLINE):
        seen = [await anext(follower), await anext(follower)]
    await follower.aclose()  # type: ignore[attr-defined]
    assert seen == [stored["concierge"], stored["booking"]]
    assert await services.aget_acta(OWNER, CHRONICUM) == [first, *seen]


async def test_without_the_lock_a_resuming_follower_would_miss_an_actum(postgres):
    """The control: writes that draw their seq before they lock (as the issue found
    chronica doing) commit out of seq order, and the check of the proof below catches
    the actum a follower never saw. Written with plain SQL, not chronica."""
    first = await services.arecord_actum(OWNER, scenario.acta()[0])
    insert = (
        "INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at)"
        " VALUES (%s, %s, 'thought', 'agent', %s, 'thinking', now()) RETURNING seq"
    )
    chronicarius = Chronicarius(DjangoStore(), poll_interval=0.01)
    follower = chronicarius.afollow(OWNER, CHRONICUM, after=first.id)
    with server_connection() as slow, server_connection() as fast:
        slow.execute("BEGIN")
        older = slow.execute(insert, ["older", CHRONICUM, "concierge"]).fetchone()
        newer = fast.execute(insert, ["newer", CHRONICUM, "search"]).fetchone()
        assert older is not None
        assert newer is not None
        assert older[0] < newer[0]
        async with asyncio.timeout(DEADLINE):
            assert (await anext(follower)).id == "newer"
        slow.execute("COMMIT")
    last = await services.arecord_actum(OWNER, scenario.booking_reply())
    async with asyncio.timeout(DEADLINE):
        assert await anext(follower) == last
    await follower.aclose()  # type: ignore[attr-defined]
    written = [a.id for a in await services.aget_acta(OWNER, CHRONICUM)]
    assert written == [first.id, "older", "newer", last.id]  # "older" was never seen


# -- the proof ---------------------------------------------------------------

WRITERS = 8  # six in threads on the sync path, two asyncio tasks on the a* path
FOLLOWERS = 3  # two in the test's event loop, one in an event loop of its own
WRITES = 12  # per writer: single acta, batches of 2 or 3, keyed writes with a retry
END = "That's all for Friday, thank you."


def rounds() -> int:
    default = "20" if os.environ.get("CHRONICA_TEST_DB") == "postgres" else "3"
    return int(os.environ.get("CHRONICA_FOLLOW_ROUNDS", default))


def turns(n: int, seed: int) -> list[tuple[list[Actum], str | None, float]]:
    """What writer ``n`` writes: (batch, idempotency key or None, pause after it)."""
    rng = random.Random(seed * 100 + n)
    actor = f"agent-{n}"
    plan = []
    for turn in range(WRITES):
        batch = [thought(turn * 10 + i, actor) for i in range(rng.choice([1, 1, 2, 3]))]
        key = f"{actor}-{turn}" if rng.random() < 0.25 else None
        plan.append((batch, key, rng.random() / 200 if rng.random() < 0.3 else 0.0))
    return plan


def sync_writer(n: int, seed: int, start: threading.Barrier) -> Callable[[], object]:
    def write() -> None:
        start.wait(DEADLINE)
        for batch, key, pause in turns(n, seed):
            services.record_acta(OWNER, batch, idempotency_key=key)
            if key:
                services.record_acta(OWNER, batch, idempotency_key=key)  # a retry: a replay
            time.sleep(pause)

    return write


async def async_writer(n: int, seed: int) -> None:
    for batch, key, pause in turns(n, seed):
        await services.arecord_acta(OWNER, batch, idempotency_key=key)
        if key:
            await services.arecord_acta(OWNER, batch, idempotency_key=key)
        await asyncio.sleep(pause)


async def follow_in_stretches(first: Actum, rng: random.Random) -> list[Actum]:
    """A follower that stops after a random number of acta (a batch may be cut in
    two) and resumes after the last one it saw, at once or after a pause, until
    ardian's last message."""
    seen: list[Actum] = []
    while not seen or seen[-1].content != END:
        follower = services.afollow(OWNER, CHRONICUM, after=seen[-1].id if seen else first.id)
        try:
            for _ in range(rng.randint(1, 15)):
                seen.append(await anext(follower))
                if seen[-1].content == END:
                    break
        finally:
            await follower.aclose()  # type: ignore[attr-defined]
        if rng.random() < 0.5:
            await asyncio.sleep(rng.random() / 50)
    return seen


def in_its_own_event_loop(first: Actum, rng: random.Random) -> list[Actum]:
    try:
        return asyncio.run(follow_in_stretches(first, rng))
    finally:
        connections.close_all()


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(rounds()))
async def test_eight_writers_three_followers_every_actum_once_in_write_order(seed, settings):
    settings.CHRONICA = {"FOLLOW_POLL_INTERVAL": 0.01}
    rng = random.Random(seed)
    first = await services.arecord_actum(OWNER, scenario.acta()[0])
    followers = [
        asyncio.ensure_future(follow_in_stretches(first, random.Random(rng.random()))),
        asyncio.ensure_future(follow_in_stretches(first, random.Random(rng.random()))),
        asyncio.ensure_future(
            asyncio.to_thread(in_its_own_event_loop, first, random.Random(rng.random()))
        ),
    ]
    assert len(followers) == FOLLOWERS
    start = threading.Barrier(WRITERS - 2)
    threads = [in_thread(sync_writer(n, seed, start)) for n in range(WRITERS - 2)]
    async with asyncio.timeout(DEADLINE):
        await asyncio.gather(*(async_writer(n, seed) for n in range(WRITERS - 2, WRITERS)))
        for thread in threads:
            await asyncio.to_thread(thread.join)
        end = Actum(
            chronicum_id=CHRONICUM, kind="message", actor_kind="human", actor="ardian", content=END
        )
        await services.arecord_actum(OWNER, end)
        seen = await asyncio.gather(*followers)

    written = await services.aget_acta(OWNER, CHRONICUM)
    expected = sum(len(batch) for n in range(WRITERS) for batch, _, _ in turns(n, seed))
    assert len(written) == 1 + expected + 1
    for follower, acta in enumerate(seen):
        ids = [a.id for a in acta]
        assert len(set(ids)) == len(ids), f"follower {follower} saw an actum twice (seed {seed})"
        assert ids == [a.id for a in written[1:]], (
            f"follower {follower} of round {seed} missed acta or saw them out of write order"
        )
