"""On PostgreSQL, followers are woken by LISTEN/NOTIFY through one connection per process.

Each test gives its followers a poll interval of an hour, so that only a notification
can deliver an actum to them within the test's deadline.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable

import pytest
from asgiref.sync import sync_to_async
from django.db import connection, connections, transaction

from chronica import Actum, services
from chronica.services import Chronicarius
from chronica.stores.db import DjangoStore
from chronica.stores.db.dialects import dialect_of
from chronica.stores.listener import NOTIFY_CHANNEL, PG_FOLLOW, listener_threads

from .. import scenario
from ..database import backend_pids, server_connection
from ..scenario import CHRONICUM, OWNER

pytestmark = pytest.mark.django_db(transaction=True)

DEADLINE = 60
HOUR = 3600.0


@pytest.fixture(autouse=True)
def postgres():
    if connection.vendor != "postgresql":
        pytest.skip(
            "LISTEN/NOTIFY is PostgreSQL's; elsewhere followers poll (tests/follow/test_follow.py)"
        )


@pytest.fixture(autouse=True)
async def close_executor_connections():
    yield
    await sync_to_async(connections.close_all)()


@pytest.fixture
def woken_only() -> Chronicarius:
    return Chronicarius(DjangoStore(), poll_interval=HOUR)


def listeners() -> list[int]:
    """The backend PIDs of chronica's LISTEN connections to the test database."""
    return backend_pids("chronica listener")


async def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not await asyncio.to_thread(condition):
        assert time.monotonic() < deadline, f"still waiting for {what}"
        await asyncio.sleep(0.02)


async def next_actum(chronicarius: Chronicarius, after: str) -> Actum:
    follower = chronicarius.afollow(OWNER, CHRONICUM, after=after)
    try:
        async with asyncio.timeout(DEADLINE):
            return await anext(follower)
    finally:
        await follower.aclose()  # type: ignore[attr-defined]


async def test_one_listen_connection_wakes_every_follower_of_every_event_loop(woken_only):
    first = await woken_only.arecord_actum(OWNER, scenario.acta()[0])
    here = [asyncio.ensure_future(next_actum(woken_only, first.id)) for _ in range(3)]
    elsewhere: list[Actum] = []
    ready = threading.Event()

    async def two_more_followers() -> None:
        tasks = [asyncio.ensure_future(next_actum(woken_only, first.id)) for _ in range(2)]
        await asyncio.sleep(0.2)
        ready.set()
        elsewhere.extend(await asyncio.gather(*tasks))

    other_loop = asyncio.ensure_future(asyncio.to_thread(asyncio.run, two_more_followers()))
    await asyncio.to_thread(ready.wait, DEADLINE)
    await until(lambda: len(listeners()) == 1, "the LISTEN connection")
    assert len(listeners()) == 1
    assert len(listener_threads()) == 1

    second = await woken_only.arecord_actum(OWNER, scenario.acta()[1])
    assert await asyncio.gather(*here) == [second] * 3
    await other_loop
    assert elsewhere == [second] * 2

    # The last follower gone, the connection and its thread are gone too.
    await until(lambda: not listeners(), "the LISTEN connection to close")
    await until(lambda: not listener_threads(), "the listener thread to end")


async def test_after_its_connection_is_killed_the_listener_comes_back(woken_only):
    first = await woken_only.arecord_actum(OWNER, scenario.acta()[0])
    follower = woken_only.afollow(OWNER, CHRONICUM, after=first.id)
    waiting = asyncio.ensure_future(anext(follower))
    await until(lambda: len(listeners()) == 1, "the LISTEN connection")
    [killed] = listeners()
    with server_connection() as admin:
        admin.execute("SELECT pg_terminate_backend(%s, 30000)", [killed])
    await until(lambda: listeners() not in ([], [killed]), "a new LISTEN connection")

    second = await woken_only.arecord_actum(OWNER, scenario.acta()[1])
    async with asyncio.timeout(DEADLINE):
        assert await waiting == second
    third = await woken_only.arecord_actum(OWNER, scenario.acta()[2])
    async with asyncio.timeout(DEADLINE):
        assert await anext(follower) == third
    await follower.aclose()  # type: ignore[attr-defined]


async def test_a_writer_that_sends_no_notify_is_read_at_the_next_poll():
    """The Go library writes into the same tables and sends no NOTIFY."""
    polling = Chronicarius(DjangoStore(), poll_interval=0.05)
    first = await polling.arecord_actum(OWNER, scenario.acta()[0])
    follower = asyncio.ensure_future(next_actum(polling, first.id))
    await asyncio.sleep(0.2)
    with server_connection() as go_library:
        go_library.execute(
            "INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at)"
            " VALUES ('from-go', %s, 'message', 'agent', 'booking', 'Held: RT-4821.', now())",
            [CHRONICUM],
        )
    assert (await follower).id == "from-go"


def test_the_notification_carries_the_chronicum_id_and_comes_at_commit_only():
    with server_connection() as listening, server_connection() as marker:
        listening.execute(f"LISTEN {NOTIFY_CHANNEL}")
        listening.execute(PG_FOLLOW, [CHRONICUM])  # as chronica's listener does
        services.record_actum(OWNER, scenario.acta()[0])
        with transaction.atomic():
            services.record_actum(OWNER, scenario.booking_reply("Confirmation RT-4821."))
            # Committed while the write above is not: its notification comes first.
            marker.execute("SELECT pg_notify(%s, 'marker')", [NOTIFY_CHANNEL])
        try:
            with transaction.atomic():
                services.record_actum(OWNER, scenario.acta()[1])
                raise LookupError("rolled back")
        except LookupError:
            pass
        marker.execute("SELECT pg_notify(%s, 'end')", [NOTIFY_CHANNEL])
        payloads = []
        for notify in listening.notifies(timeout=DEADLINE):
            payloads.append(notify.payload)
            if notify.payload == "end":
                break
    assert payloads == [CHRONICUM, "marker", CHRONICUM, "end"]


async def test_a_delete_ends_the_follow_at_once(woken_only):
    first = await woken_only.arecord_actum(OWNER, scenario.acta()[0])
    waiting = asyncio.ensure_future(next_actum(woken_only, first.id))
    await until(lambda: len(listeners()) == 1, "the LISTEN connection")
    await woken_only.adelete_chronicum(OWNER, CHRONICUM)
    with pytest.raises(services.ChronicumNotFound):
        await waiting


def test_a_chronicum_nobody_follows_gets_no_notify():
    """NOTIFY serializes the commits of a whole database: writes nobody follows send none."""
    with server_connection() as listening, server_connection() as marker:
        listening.execute(f"LISTEN {NOTIFY_CHANNEL}")
        listening.execute(PG_FOLLOW, ["lunch-sunday"])
        services.record_acta(OWNER, scenario.acta())
        services.record_actum(OWNER, scenario.booking_reply("Held.", "lunch-sunday"))
        marker.execute("SELECT pg_notify(%s, 'end')", [NOTIFY_CHANNEL])
        payloads = []
        for notify in listening.notifies(timeout=DEADLINE):
            payloads.append(notify.payload)
            if notify.payload == "end":
                break
    assert payloads == ["lunch-sunday", "end"]


async def test_a_write_left_open_while_a_follow_begins_is_not_missed(woken_only):
    """The write looked for a follower before there was one, and commits after the
    follower began: the listener waits for it before it wakes the follower."""
    first = await woken_only.arecord_actum(OWNER, scenario.acta()[0])
    holding, release = threading.Event(), threading.Event()
    written: list[Actum] = []

    def concierge() -> None:
        try:
            with transaction.atomic():
                written.append(services.record_actum(OWNER, scenario.acta()[1]))
                holding.set()
                release.wait(DEADLINE)
        finally:
            connection.close()

    writer = threading.Thread(target=concierge)
    writer.start()
    await asyncio.to_thread(holding.wait, DEADLINE)
    follower = asyncio.ensure_future(next_actum(woken_only, first.id))
    await until(lambda: len(listeners()) == 1, "the LISTEN connection")
    await asyncio.sleep(0.2)  # the listener tries, and keeps trying, the write's lock
    release.set()
    await asyncio.to_thread(writer.join)
    assert await follower == written[0]


def test_a_follower_reads_from_its_position_by_index_however_long_the_chronicum():
    """The read starts where the follower is, on (chronicum_id, seq): the chronicum and
    "seq > position" are where the index scan starts, not a filter over the chronicum's
    older acta."""
    from chronica.values import ActaQuery

    services.record_acta(OWNER, scenario.acta())
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at)"
            " SELECT md5(g::text), %s, 'thought', 'agent', 'planner', 'turn ' || g, now()"
            " FROM generate_series(1, 20000) AS g",
            [CHRONICUM],
        )
        cursor.execute("ANALYZE acta")
        cursor.execute("SELECT MIN(seq) + 10000 FROM acta WHERE chronicum_id = %s", [CHRONICUM])
        position = cursor.fetchone()[0]
        (sql, params), _ = dialect_of(connection).after(
            OWNER, CHRONICUM, ActaQuery(), position, 200
        )
        cursor.execute("EXPLAIN (COSTS OFF) " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Index Scan using acta_chronicum_seq on acta" in plan, plan
    assert "Index Cond: (((chronicum_id)::text = ANY (" in plan, plan
    assert "AND (seq > " in plan, plan


async def test_the_listener_works_in_a_process_with_over_1024_descriptors(woken_only):
    # An ASGI worker with a thousand streams open: the LISTEN connection's socket
    # gets a descriptor past select()'s limit.
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1400:
        pytest.skip(f"the soft limit of open files is {soft}: cannot open 1,100 sockets")
    from chronica.stores.listener import stop_listeners

    stop_listeners()
    held = [socket.socketpair() for _ in range(550)]
    try:
        first = await woken_only.arecord_actum(OWNER, scenario.acta()[0])
        follower = asyncio.ensure_future(next_actum(woken_only, first.id))
        await until(lambda: len(listeners()) == 1, "the listener")
        await asyncio.sleep(0.3)  # its lock taken
        second = await woken_only.arecord_actum(OWNER, scenario.acta()[1])
        # Polling once an hour: only the NOTIFY can bring it.
        assert await follower == second
        assert all(t.is_alive() for t in listener_threads())
    finally:
        for a, b in held:
            a.close()
            b.close()
