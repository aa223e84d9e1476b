"""afollow: one agent waits for another, on the in-memory store and on DjangoStore.

The booking agent follows dinner-friday and acts the moment ardian says
"Rumah Teduh", without polling get_acta. Every actum recorded after the one it
resumes from comes once, in write order, filtered like a context window.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest
from asgiref.sync import sync_to_async
from django.db import connections

from chronica import Actum, ActumKind, ChronicumNotFound, InvalidQuery, services
from chronica.errors import StoreUnsupported
from chronica.follow import PAGE
from chronica.services import Chronicarius, Follower

from .. import scenario
from ..scenario import CHRONICUM, OWNER
from ..teststores import PlainStore

# Generous: only reached when something is broken, never a measure of speed.
DEADLINE = 60


@pytest.fixture(autouse=True)
async def close_executor_connections():
    yield
    await sync_to_async(connections.close_all)()


@pytest.fixture
def chronicarius(store) -> Chronicarius:
    return Chronicarius(store, poll_interval=0.02)


async def take(acta: AsyncIterator[Actum], n: int) -> list[Actum]:
    """The next ``n`` acta a follower yields, then it stops."""
    got: list[Actum] = []
    async with asyncio.timeout(DEADLINE):
        async for actum in acta:
            got.append(actum)
            if len(got) == n:
                break
    await acta.aclose()  # type: ignore[attr-defined]
    return got


async def started(follower: AsyncIterator[Actum], n: int) -> asyncio.Task[list[Actum]]:
    """``take(follower, n)`` running, once the follower has taken its position."""
    task = asyncio.ensure_future(take(follower, n))
    # The follower's first read is its position; a few turns of the loop get it there.
    for _ in range(50):
        await asyncio.sleep(0.01)
    return task


async def test_the_booking_agent_waits_for_ardians_choice(chronicarius):
    seven = scenario.acta()
    for actum in seven[:5]:
        await chronicarius.arecord_actum(OWNER, actum)

    booking = await started(chronicarius.afollow(OWNER, CHRONICUM, actor_kinds=["human"]), 1)
    rest = [await chronicarius.arecord_actum(OWNER, actum) for actum in seven[5:]]

    [choice] = await booking
    assert choice == rest[0]
    assert choice.content == "Rumah Teduh."


async def test_from_the_moment_of_the_call_every_actum_once_in_write_order(chronicarius):
    await chronicarius.arecord_actum(OWNER, scenario.acta()[0])
    follower = await started(chronicarius.afollow(OWNER, CHRONICUM), 7)
    stored = [await chronicarius.arecord_actum(OWNER, a) for a in scenario.acta()[1:]]
    stored.append(await chronicarius.arecord_actum(OWNER, scenario.booking_reply()))
    assert await follower == stored


async def test_resuming_after_an_actum(chronicarius):
    stored = await chronicarius.arecord_acta(OWNER, scenario.acta())
    rest = await take(chronicarius.afollow(OWNER, CHRONICUM, after=stored[2].id), 4)
    assert rest == stored[3:]


async def test_resuming_after_the_last_seen_misses_none(chronicarius):
    stored = await chronicarius.arecord_acta(OWNER, scenario.acta())
    seen = await take(chronicarius.afollow(OWNER, CHRONICUM, after=stored[0].id), 2)
    reply = await chronicarius.arecord_actum(OWNER, scenario.booking_reply())
    seen += await take(chronicarius.afollow(OWNER, CHRONICUM, after=seen[-1].id), 5)
    assert seen == [*stored[1:], reply]


async def test_filtered_like_a_window(chronicarius):
    stored = await chronicarius.arecord_acta(OWNER, scenario.acta())
    first = stored[0].id
    messages = await take(chronicarius.afollow(OWNER, CHRONICUM, after=first, kinds="message"), 3)
    assert messages == [a for a in stored[1:] if a.kind == ActumKind.MESSAGE]
    tools = chronicarius.afollow(
        OWNER, CHRONICUM, after=first, kinds=["tool_request", "tool_response"]
    )
    assert [a.actor for a in await take(tools, 2)] == ["search", "search"]


async def test_a_batch_comes_whole_and_in_order(chronicarius):
    await chronicarius.arecord_actum(OWNER, scenario.acta()[0])
    follower = await started(chronicarius.afollow(OWNER, CHRONICUM), 6)
    batch = await chronicarius.arecord_acta(OWNER, scenario.acta()[1:])
    assert await follower == batch


async def test_a_backlog_longer_than_a_page(chronicarius):
    first = await chronicarius.arecord_actum(OWNER, scenario.acta()[0])
    backlog = [
        Actum(
            chronicum_id=CHRONICUM,
            kind="thought",
            actor_kind="agent",
            actor="planner",
            content=f"turn {i}",
        )
        for i in range(PAGE * 2 + 7)
    ]
    stored = await chronicarius.arecord_acta(OWNER, backlog)
    assert await take(chronicarius.afollow(OWNER, CHRONICUM, after=first.id), len(stored)) == stored


async def test_a_backlog_over_the_byte_budget_is_read_a_budget_at_a_time(
    chronicarius, store, monkeypatch
):
    # The API's stream (CHRONICA["API_MAX_RESPONSE_BYTES"]): no read of the store
    # holds more than the budget, one actum aside, and every actum comes, in order.
    from chronica.stores.db import DjangoStore

    reads: list[int] = []
    acta_after = store.acta_after

    def counted(*args, **kwargs):
        page = acta_after(*args, **kwargs)
        if page is not None:
            reads.append(len(page[0]))
        return page

    monkeypatch.setattr(store, "acta_after", counted)
    first = await chronicarius.arecord_actum(OWNER, scenario.acta()[0])
    backlog = [
        Actum(
            chronicum_id=CHRONICUM,
            kind="tool_response",
            actor_kind="agent",
            actor="search",
            content=f"result {i}",
            data=[[]] * (2000 if i == 4 else 300),  # 900 bytes; one of 6,000, over it
        )
        for i in range(9)
    ]
    stored = await chronicarius.arecord_acta(OWNER, backlog)
    follower = chronicarius.afollow(OWNER, CHRONICUM, after=first.id, max_bytes=2000)
    assert await take(follower, len(stored)) == stored
    if isinstance(store, DjangoStore):  # the in-memory store holds them all anyway
        assert reads[:5] == [2, 2, 1, 2, 2]


async def test_a_filter_skips_more_than_a_page_of_other_acta(chronicarius):
    first = await chronicarius.arecord_actum(OWNER, scenario.acta()[0])
    follower = await started(
        chronicarius.afollow(OWNER, CHRONICUM, after=first.id, actor_kinds=["human"]), 1
    )
    noise = [
        Actum(
            chronicum_id=CHRONICUM,
            kind="thought",
            actor_kind="agent",
            actor="planner",
            content=f"turn {i}",
        )
        for i in range(PAGE * 3)
    ]
    await chronicarius.arecord_acta(OWNER, noise)
    choice = await chronicarius.arecord_actum(OWNER, scenario.acta()[5])
    assert await follower == [choice]


async def test_someone_elses_chronicum_is_not_found_before_anything_is_yielded(chronicarius):
    stored = await chronicarius.arecord_acta(OWNER, scenario.acta())
    for owner, chronicum_id, after in [
        ("rafa", CHRONICUM, None),
        ("rafa", CHRONICUM, stored[0].id),
        ("rafa", CHRONICUM, "no-such-actum"),
        (OWNER, "never-existed", None),
        (OWNER, "never-existed", "no-such-actum"),
    ]:
        with pytest.raises(ChronicumNotFound) as raised:
            await anext(chronicarius.afollow(owner, chronicum_id, after=after))
        assert str(raised.value) == str(ChronicumNotFound(chronicum_id))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"after": "no-such-actum"}, "after='no-such-actum' is not an actum of this chronicum"),
        ({"after": "bad\x00id"}, "is not an actum of this chronicum"),
        ({"after": 7}, "after must be an actum ID"),
        ({"kinds": ["gossip"]}, "gossip"),
        ({"actor_kinds": "robot"}, "robot"),
    ],
)
async def test_a_bad_query_is_an_invalid_query(chronicarius, arguments, message):
    await chronicarius.arecord_acta(OWNER, scenario.acta())
    with pytest.raises(InvalidQuery, match=message):
        await anext(chronicarius.afollow(OWNER, CHRONICUM, **arguments))


class TestStartedEarly:
    """A follower started before it is read (``await`` it, or ``start()`` from sync code):
    every check answered then, its place taken then. The stream starts one in its view,
    so that a 404 or a 400 is answered before the first byte."""

    async def test_awaited_it_follows_from_then_not_from_its_first_read(self, chronicarius):
        seven = scenario.acta()
        await chronicarius.arecord_actum(OWNER, seven[0])
        follower = await chronicarius.afollow(OWNER, CHRONICUM, actor_kinds=["human"])
        assert isinstance(follower, Follower)
        await chronicarius.arecord_actum(OWNER, seven[1])
        choice = await chronicarius.arecord_actum(OWNER, seven[5])
        assert await take(follower, 1) == [choice]

    def test_started_in_sync_code_it_is_read_in_an_event_loop(self, chronicarius):
        seven = scenario.acta()
        chronicarius.record_actum(OWNER, seven[0])
        follower = chronicarius.afollow(OWNER, CHRONICUM).start()
        assert follower.start() is follower  # once
        later = chronicarius.record_acta(OWNER, seven[1:3])
        assert asyncio.run(take(follower, 2)) == later

    async def test_every_check_is_answered_by_the_start(self, chronicarius):
        await chronicarius.arecord_acta(OWNER, scenario.acta())
        for owner, arguments, error in [
            ("rafa", {}, ChronicumNotFound),
            (OWNER, {"after": "no-such-actum"}, InvalidQuery),
            (OWNER, {"after": "bad\x00id"}, InvalidQuery),
            (OWNER, {"kinds": ["gossip"]}, InvalidQuery),
        ]:
            with pytest.raises(error):
                await chronicarius.afollow(owner, CHRONICUM, **arguments)
            with pytest.raises(error):
                await sync_to_async(chronicarius.afollow(owner, CHRONICUM, **arguments).start)()

    async def test_one_that_failed_to_start_is_over(self, chronicarius):
        follower = chronicarius.afollow(OWNER, "never-existed")
        with pytest.raises(ChronicumNotFound):
            await follower
        with pytest.raises(StopAsyncIteration):
            await anext(follower)

    async def test_closed_before_it_was_read_it_is_over(self, chronicarius):
        await chronicarius.arecord_actum(OWNER, scenario.acta()[0])
        follower = await chronicarius.afollow(OWNER, CHRONICUM)
        await follower.aclose()
        await chronicarius.arecord_actum(OWNER, scenario.acta()[1])
        with pytest.raises(StopAsyncIteration):
            await anext(follower)
        never_started = chronicarius.afollow(OWNER, CHRONICUM)
        await never_started.aclose()
        with pytest.raises(StopAsyncIteration):
            await anext(never_started)


async def test_an_actum_of_another_chronicum_is_no_place_to_resume(chronicarius):
    other = await chronicarius.arecord_actum(OWNER, scenario.booking_reply("x", "lunch-sunday"))
    await chronicarius.arecord_acta(OWNER, scenario.acta())
    with pytest.raises(InvalidQuery):
        await anext(chronicarius.afollow(OWNER, CHRONICUM, after=other.id))


async def test_a_deleted_chronicum_ends_the_follow_with_not_found(chronicarius):
    await chronicarius.arecord_acta(OWNER, scenario.acta())
    follower = await started(chronicarius.afollow(OWNER, CHRONICUM), 1)
    await chronicarius.adelete_chronicum(OWNER, CHRONICUM)
    with pytest.raises(ChronicumNotFound):
        await follower


async def test_a_store_that_cannot_be_followed():
    chronicarius = Chronicarius(PlainStore())
    await chronicarius.arecord_actum(OWNER, scenario.booking_reply())
    with pytest.raises(StoreUnsupported, match="supports_follow"):
        await anext(chronicarius.afollow(OWNER, CHRONICUM))


@pytest.mark.django_db(transaction=True)
async def test_the_module_function_on_the_configured_store():
    services.reset_chronicarius()
    try:
        stored = await services.arecord_acta(OWNER, scenario.acta())
        rest = await take(services.afollow(OWNER, CHRONICUM, after=stored[-2].id), 1)
        assert rest == stored[-1:]
        with pytest.raises(ChronicumNotFound):
            await anext(services.afollow("rafa", CHRONICUM))
    finally:
        services.reset_chronicarius()


async def test_stopping_a_follower_mid_wait_leaves_nothing_behind(chronicarius):
    await chronicarius.arecord_actum(OWNER, scenario.acta()[0])
    task = await started(chronicarius.afollow(OWNER, CHRONICUM), 1)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert task.cancelled()


@pytest.mark.parametrize(
    ("setting", "value", "check_id"),
    [
        ("FOLLOW_POLL_INTERVAL", 0, "chronica.E008"),
        ("FOLLOW_POLL_INTERVAL", "1s", "chronica.E008"),
    ],
)
def test_a_bad_follow_setting_is_reported_by_manage_py_check(setting, value, check_id):
    from django.core.checks import run_checks
    from django.test import override_settings

    with override_settings(CHRONICA={setting: value}):
        found = [m for m in run_checks() if m.id.startswith("chronica.")]
    assert [m.id for m in found] == [check_id]
    assert setting in found[0].msg


@pytest.mark.parametrize("value", [10, 0, "ten"])
def test_async_pool_size_is_retired_with_a_warning_not_an_error(value):
    """The asyncio path runs the sync call in Django's executor: ASYNC_POOL_SIZE sizes
    nothing any more. Left in a settings file it is chronica.W005 (whatever its value),
    not E002's unknown key, and nothing reads it."""
    from django.core.checks import Warning, run_checks
    from django.test import override_settings

    from chronica.conf import chronica_settings

    with override_settings(CHRONICA={"ASYNC_POOL_SIZE": value, "FOLLOW_POLL_INTERVAL": 0.5}):
        found = [m for m in run_checks() if m.id.startswith("chronica.")]
        assert chronica_settings.FOLLOW_POLL_INTERVAL == 0.5
    assert [m.id for m in found] == ["chronica.W005"]
    (warning,) = found
    assert isinstance(warning, Warning)
    assert warning.msg.startswith("CHRONICA['ASYNC_POOL_SIZE'] has no effect since ")
    assert "Django's executor" in warning.msg
    assert not hasattr(chronica_settings, "ASYNC_POOL_SIZE")


def test_the_follow_settings_and_their_defaults():
    from django.test import override_settings

    from chronica.conf import chronica_settings

    assert chronica_settings.FOLLOW_POLL_INTERVAL == 1.0
    with override_settings(CHRONICA={"FOLLOW_POLL_INTERVAL": 0.25}):
        assert chronica_settings.FOLLOW_POLL_INTERVAL == 0.25
        services.reset_chronicarius()
        assert services.get_chronicarius().poll_interval == 0.25
    services.reset_chronicarius()
