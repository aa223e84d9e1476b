"""The a* calls on PostgreSQL: psycopg's async connections from a pool, no worker thread.

An agent worker is an asyncio program. On PostgreSQL, once a chronicum exists, its
agents record and read it through the a* calls with no thread hop: the same
statements as the sync path, on a pool of this event loop that is closed when the
loop ends. Elsewhere (SQLite) the a* calls keep running the sync calls in a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest
from asgiref.sync import sync_to_async
from django.db import OperationalError, connection, connections
from django.test import override_settings

from chronica import Actum, ChronicumNotFound, InvalidQuery, services
from chronica.services import Chronicarius
from chronica.stores import pg_async
from chronica.stores.db import DjangoStore
from chronica.values import StateChange, StateScope

from .. import scenario
from ..database import backend_pids, server_connection
from ..scenario import CHRONICUM, OWNER

pytestmark = pytest.mark.django_db(transaction=True)


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
        pytest.skip("the asyncio path is PostgreSQL's; elsewhere the a* calls use a thread")


class NoSyncStore(DjangoStore):
    """DjangoStore that remembers every sync call it gets after ``watch()``."""

    def __init__(self) -> None:
        super().__init__()
        self.sync_calls: list[str] | None = None

    def watch(self) -> None:
        self.sync_calls = []

    def __getattribute__(self, name: str):
        value = super().__getattribute__(name)
        calls = super().__getattribute__("sync_calls")
        sync = name in {
            "get",
            "record_batch",
            "record_batch_if_owner",
            "acta_if_owner",
            "acta",
            "read_state",
            "list_namespace",
        }
        if calls is not None and (sync or name in {"follow_position", "acta_after"}):
            calls.append(name)
        return value


def async_connections() -> list[int]:
    """The PIDs of the asyncio path's connections to the test database."""
    return backend_pids("chronica async")


def all_closed() -> bool:
    """Whether every connection of the asyncio path is gone. A backend leaves
    pg_stat_activity a moment after its client closed the connection: waited for."""
    deadline = time.monotonic() + 30
    while async_connections():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


async def test_after_the_first_write_no_call_takes_the_thread(postgres):
    store = NoSyncStore()
    chronicarius = Chronicarius(store)
    first = await chronicarius.arecord_actum(OWNER, scenario.acta()[0])  # creates it
    store.watch()

    rest = await chronicarius.arecord_acta(OWNER, scenario.acta()[1:])
    window = await chronicarius.aget_acta(OWNER, CHRONICUM, kinds=["message"], last_n=3)
    chronicum = await chronicarius.aget_chronicum(OWNER, CHRONICUM)
    follower = chronicarius.afollow(OWNER, CHRONICUM, after=rest[-2].id)
    followed = await anext(follower)
    await follower.aclose()  # type: ignore[attr-defined]

    assert store.sync_calls == []
    assert [a.actor for a in window] == ["search", "ardian", "concierge"]
    assert chronicum.last_activity_at == rest[-1].at
    assert followed == rest[-1]
    assert [first, *rest] == await sync_to_async(chronicarius.get_acta)(OWNER, CHRONICUM)


async def test_state_reads_take_no_thread_and_answer_as_the_sync_path(postgres):
    """aget_state and alist_namespace (ADK's get_session and list_sessions) run on the
    asyncio path: the same statements as read_state and list_namespace."""
    store = NoSyncStore()
    chronicarius = Chronicarius(store)
    ns = "adk:dinner"
    for owner, cid, party in ((OWNER, CHRONICUM, 4), ("rafa", "rafa-dinner", 2)):
        await chronicarius.aupdate_state(
            owner,
            cid,
            [
                StateChange(namespace=ns, set={"party": party}),
                StateChange(namespace=ns, scope=StateScope.OWNER, set={"name": owner}),
                StateChange(namespace=ns, scope=StateScope.NAMESPACE, set={"city": "Jakarta"}),
            ],
            create=True,
        )
    await chronicarius.arecord_acta(OWNER, scenario.acta())
    store.watch()

    reads = [
        ((OWNER, ns, CHRONICUM), {"acta": True, "last_n": 3}),
        ((OWNER, ns, CHRONICUM), {"acta": True}),
        ((OWNER, ns, CHRONICUM), {}),
        ((OWNER, ns), {}),
        ((OWNER, ns, "rafa-dinner"), {"acta": True}),  # rafa's: not ardian's to read
        (("rafa", ns, "rafa-dinner"), {"acta": True, "last_n": 20}),  # no acta: []
        ((OWNER, "elsewhere", CHRONICUM), {"acta": True, "last_n": 2}),
    ]
    views = [await chronicarius.aget_state(*args, **kwargs) for args, kwargs in reads]
    listings = [
        await chronicarius.alist_namespace(ns, owner_id=owner) for owner in (OWNER, "rafa", None)
    ]
    assert store.sync_calls == []

    assert views[0].chronicum_state == {"party": 4}
    assert views[0].owner_state == {"name": OWNER}
    assert [a.content for a in views[0].acta or []] == [a.content for a in scenario.acta()[-3:]]
    assert views[4].chronicum is None
    assert views[4].chronicum_state is None
    assert views[5].acta == []
    assert [[c.id for c, _ in listing.chronica] for listing in listings] == [
        [CHRONICUM],
        ["rafa-dinner"],
        ["rafa-dinner", CHRONICUM],  # oldest activity first: ardian wrote last
    ]
    assert listings[2].owner_states == {OWNER: {"name": OWNER}, "rafa": {"name": "rafa"}}
    store.sync_calls = None
    for (args, kwargs), view in zip(reads, views, strict=True):
        assert view == await sync_to_async(chronicarius.get_state)(*args, **kwargs), args
    for owner, listing in zip((OWNER, "rafa", None), listings, strict=True):
        assert listing == await sync_to_async(chronicarius.list_namespace)(ns, owner_id=owner)


async def test_the_same_answers_as_the_sync_path(postgres):
    booking = scenario.booking_reply()
    tool_call = [
        Actum(
            chronicum_id=CHRONICUM,
            kind=k,
            actor_kind="agent",
            actor="search",
            content=c,
            call_id="search-1",
            data={"area": "Kemang", "party": 4},
        )
        for k, c in (("tool_request", '{"area":"Kemang"}'), ("tool_response", "[...]"))
    ]
    stored = await services.arecord_acta(OWNER, [*scenario.acta(), *tool_call])
    first = await services.arecord(OWNER, [booking], idempotency_key="booking-reply-1")
    replay = await services.arecord(
        OWNER,
        [scenario.booking_reply(scenario.BOOKING_REPLY_REWORDED)],
        idempotency_key="booking-reply-1",
    )
    assert (first.replayed, replay.replayed) == (False, True)
    assert replay.acta == first.acta

    windows = [
        {},
        {"kinds": ["message"], "last_n": 3},
        {"actor_kinds": "agent", "max_tokens": 40},
        {"before": stored[5].id, "last_n": 2},
        {"last_n": 2, "whole_tool_calls": True},
    ]
    for arguments in windows:
        assert await services.aget_acta(OWNER, CHRONICUM, **arguments) == await sync_to_async(
            services.get_acta
        )(OWNER, CHRONICUM, **arguments), arguments
    assert await services.aget_chronicum(OWNER, CHRONICUM) == await sync_to_async(
        services.get_chronicum
    )(OWNER, CHRONICUM)


async def test_the_rules_hold_on_the_asyncio_path(postgres):
    await services.arecord_acta(OWNER, scenario.acta())
    with pytest.raises(ChronicumNotFound):
        await services.arecord_actum("rafa", scenario.booking_reply())
    with pytest.raises(ChronicumNotFound):
        await services.aget_acta("rafa", CHRONICUM)
    with pytest.raises(ChronicumNotFound):
        await services.aget_chronicum("rafa", CHRONICUM)
    with pytest.raises(InvalidQuery):
        await services.aget_acta(OWNER, CHRONICUM, before="no-such-actum")
    assert await services.aget_acta(OWNER, CHRONICUM, kinds=["message"], last_n=0)


async def test_provenance_round_trips_on_the_asyncio_path(postgres):
    """Issue 21: an agent's credential and the owner in person, written, replayed,
    read, followed and popped with no thread hop, each actum with its ``recorded_by``."""
    store = NoSyncStore()
    chronicarius = Chronicarius(store)
    await chronicarius.arecord_actum(OWNER, scenario.acta()[0])  # creates it
    store.watch()
    booking = chronicarius.acting_as(
        services.AgentIdentity(owner_id=OWNER, actor="booking", key_id="b00k1n9b00k1")
    )
    person = chronicarius.acting_as(services.OwnerIdentity(OWNER))
    held = [
        Actum(chronicum_id=CHRONICUM, kind="message", actor_kind="", actor="", content=c)
        for c in ("Held: Rumah Teduh.", "7pm, four people.")
    ]
    first = await booking.arecord(OWNER, held, idempotency_key="booking-held")
    replay = await booking.arecord(OWNER, held, idempotency_key="booking-held")
    asked = await person.arecord_actum(OWNER, scenario.acta()[5])
    follower = chronicarius.afollow(OWNER, CHRONICUM, after=first.acta[0].id)
    followed = [await anext(follower), await anext(follower)]
    await follower.aclose()  # type: ignore[attr-defined]
    window = await chronicarius.aget_acta(OWNER, CHRONICUM)
    popped = await chronicarius.apop_actum(OWNER, CHRONICUM)

    by = "credential:b00k1n9b00k1"
    assert (replay.replayed, replay.acta) == (True, first.acta)
    assert [a.recorded_by for a in window] == [None, by, by, "owner"]
    assert followed == window[2:]
    assert popped == asked == window[-1]
    assert store.sync_calls == []
    assert await sync_to_async(chronicarius.get_acta)(OWNER, CHRONICUM) == window[:-1]


def test_each_event_loop_closes_its_pool_when_it_ends(postgres):
    async def agent_turn(n: int) -> None:
        await services.arecord_actum(OWNER, scenario.booking_reply(f"turn {n}"))
        await services.aget_acta(OWNER, CHRONICUM, last_n=3)
        assert async_connections()

    services.record_actum(OWNER, scenario.acta()[0])
    for n in range(3):
        asyncio.run(agent_turn(n))
        assert all_closed()
    assert len(services.get_acta(OWNER, CHRONICUM)) == 4


def test_a_loop_run_by_hand_closes_its_pools_with_close_pools(postgres):
    services.record_actum(OWNER, scenario.acta()[0])

    async def turn() -> None:
        await services.aget_acta(OWNER, CHRONICUM)

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(turn())
        assert async_connections()
        loop.run_until_complete(pg_async.close_pools())
        assert all_closed()
    finally:
        loop.close()


def test_a_loop_run_by_hand_and_closed_closes_its_pools(postgres):
    """new_event_loop(), run_until_complete(), close(): no task is cancelled, yet the
    pools close with the loop. Between runs the loop's async generators are shut
    down (as the OpenAI Agents SDK's run_sync does after each run): the pools stay."""
    services.record_actum(OWNER, scenario.acta()[0])

    async def turn() -> None:
        await services.arecord_actum(OWNER, scenario.booking_reply())

    loop = asyncio.new_event_loop()
    try:
        for _ in range(2):
            loop.run_until_complete(turn())
            loop.run_until_complete(loop.shutdown_asyncgens())
            pids = async_connections()
            assert pids
        assert async_connections() == pids
    finally:
        loop.close()
    assert all_closed()
    assert len(services.get_acta(OWNER, CHRONICUM)) == 3


@override_settings(CHRONICA={"ASYNC_POOL_SIZE": 3})
def test_thirty_two_tasks_share_a_pool_of_the_configured_size(postgres):
    services.record_acta(OWNER, scenario.acta())
    seen: list[int] = []

    async def many_agents() -> None:
        async def agent(n: int) -> None:
            for turn in range(5):
                await services.arecord_actum(OWNER, scenario.booking_reply(f"{n}.{turn}"))
                seen.append(len(async_connections()))

        await asyncio.gather(*(agent(n) for n in range(32)))

    asyncio.run(many_agents())
    assert max(seen) <= 3
    assert len(services.get_acta(OWNER, CHRONICUM)) == 7 + 32 * 5
    assert all_closed()


async def test_the_next_call_after_the_connections_are_killed_works(postgres):
    stored = await services.arecord_acta(OWNER, scenario.acta())
    assert await services.aget_acta(OWNER, CHRONICUM) == stored
    killed = async_connections()
    with server_connection() as admin:
        for pid in killed:
            admin.execute("SELECT pg_terminate_backend(%s, 30000)", [pid])

    # The call that meets a dead connection may fail, with Django's error class.
    with contextlib.suppress(OperationalError):
        await services.aget_acta(OWNER, CHRONICUM)
    reply = await services.arecord_actum(OWNER, scenario.booking_reply())
    assert await services.aget_acta(OWNER, CHRONICUM) == [*stored, reply]
    assert not set(async_connections()) & set(killed)


async def test_connection_settings_come_from_djangos_database_settings(postgres):
    params = pg_async.connection_params("default")
    assert params["dbname"] == connection.settings_dict["NAME"]
    assert params["prepare_threshold"] is None  # Django's default, like the sync path
    assert "cursor_factory" not in params


async def test_elsewhere_the_a_calls_keep_the_thread():
    if connection.vendor == "postgresql":
        pytest.skip("on PostgreSQL the asyncio path is taken (the tests above)")
    assert DjangoStore().supports_async() is False
    first = await services.arecord_actum(OWNER, scenario.acta()[0])
    assert await services.aget_acta(OWNER, CHRONICUM) == [first]
