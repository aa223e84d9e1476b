"""Following a chronicum: the loop behind ``services.afollow``.

A follower reads forward from a position (``FollowingStore``), yields what it
read, and waits for news: on PostgreSQL a NOTIFY for its chronicum, which the
writing transaction sends as it commits (``chronica.stores.listener``: the LISTEN
connection and the protocol); elsewhere nothing, so it reads again after
``CHRONICA["FOLLOW_POLL_INTERVAL"]`` seconds. On PostgreSQL that interval only
matters for writers that send no NOTIFY (the Go library writing into the same
tables), and while the LISTEN connection is down.

**Shared reads.** The followers of one chronicum in one event loop (an ASGI worker's)
that stand at the same position with the same filters share one read: the first
starts it, the others woken by the same news wait for its answer. So a write costs
one query for a thousand followers of its chronicum, not a thousand. A read begun
before a later NOTIFY of the chronicum is not shared by the followers that NOTIFY
woke (they read again, and see that write).

**One safety poll.** A follower that nothing woke reads again at the next multiple
of the interval on its event loop's clock, not an interval after its own last read:
the idle followers of a chronicum wake together, and share that read too. So idle
streams cost one query per followed chronicum and interval, not one per stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable, Hashable
from typing import Any

from .errors import ChronicumNotFound
from .interfaces import Subscription
from .validation import raw_data
from .values import Actum

__all__ = ["PAGE", "Polling", "follow"]

PAGE = 200
"""The most acta a follower reads in one statement."""

Page = tuple[list[Actum], int] | tuple[list[Actum], int, bool] | None

Read = Callable[[int, int], Awaitable[Page]]
"""``read(position, limit)``: ``FollowingStore.acta_after`` for one follower (a third
item ``True``: cut short by the byte budget, read on at once)."""

# The reads under way, by event loop, what is read (store, owner, chronicum, filters),
# the news generation and the position.
_reads: dict[tuple[Any, ...], asyncio.Future[Page]] = {}


async def follow(
    chronicum_id: str,
    read: Read,
    position: int,
    news: Subscription,
    interval: float,
    shared: Hashable | None = None,
) -> AsyncGenerator[Actum, None]:
    """Every actum ``read`` finds after ``position``, oldest first, until the caller
    stops; ``ChronicumNotFound`` once the chronicum is gone. ``news`` is closed at the end.

    ``news`` must have been subscribed before ``position`` was taken: whatever
    commits after that wakes the follower, or is read by its next read anyway.
    ``shared``: what the read reads (the same key, the same answer for the same
    position); followers with equal keys share reads. ``None``: never shared.
    """
    loop = asyncio.get_running_loop()
    try:
        while True:
            page = await _read(loop, shared, news, read, position, interval)
            if page is None:
                raise ChronicumNotFound(chronicum_id)
            acta, position, *cut = page
            for actum in acta:
                yield actum
            if len(acta) < PAGE and not any(cut):
                # Until the next multiple of the interval: idle followers wake together.
                await news.wait(interval - loop.time() % interval)
    finally:
        news.close()


async def _read(
    loop: asyncio.AbstractEventLoop,
    shared: Hashable | None,
    news: Subscription,
    read: Read,
    position: int,
    interval: float,
) -> Page:
    if shared is None:
        return await read(position, PAGE)
    # Followers that take data as stored text (the API's stream) read apart.
    key = (loop, shared, raw_data.get(), getattr(news, "generation", 0), position)
    task = _reads.get(key)
    if task is None:
        task = _reads[key] = asyncio.ensure_future(read(position, PAGE))
        keep = min(interval / 4, KEEP)
        task.add_done_callback(lambda done: _done(loop, key, done, keep))
    # Shielded: a follower that goes away must not cancel the read of the others.
    return await asyncio.shield(task)


KEEP = 0.25
"""At most, seconds a finished read still answers the followers woken with it that come
late (a thousand followers take a busy event loop a while to resume); and at most a
quarter of the poll interval. No NOTIFY came since (its generation would differ), so
it is as good as a poll that came that much earlier."""


def _done(
    loop: asyncio.AbstractEventLoop, key: tuple[Any, ...], task: asyncio.Future[Page], keep: float
) -> None:
    if not task.cancelled():
        task.exception()  # retrieved: asyncio logs none when nobody waits any more
    if task.cancelled() or task.exception() is not None:
        _forget(key, task)
    else:
        loop.call_later(keep, _forget, key, task)


def _forget(key: tuple[Any, ...], task: asyncio.Future[Page]) -> None:
    if _reads.get(key) is task:
        del _reads[key]


class Polling:
    """No notifications: the follower reads again after each interval."""

    async def wait(self, timeout: float) -> None:
        await asyncio.sleep(timeout)

    def close(self) -> None:
        pass


def __getattr__(name: str) -> Any:
    # The listener lives in chronica.stores.listener; its names stay importable from
    # here, imported on use so that this module imports no store.
    if name in ("listen", "listener_threads", "stop_listeners"):
        from .stores import listener

        return getattr(listener, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
