"""Following a chronicum: the loop behind ``services.afollow``.

A follower reads forward from a position (``BaseStore.acta_after``), yields what it
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

**A read that fails** on a lost connection (a backend terminated, a server restarted:
``OperationalError``, ``InterfaceError``) is read again, from the same position, after
a pause that doubles up to the poll interval, on a fresh connection: the broken one is
dropped. The followers that shared the read read again too; none ends, none skips an actum.

**One safety poll.** A follower that nothing woke reads again at the next multiple
of the interval on its event loop's clock, not an interval after its own last read:
the idle followers of a chronicum wake together, and share that read too. So idle
streams cost one query per followed chronicum and interval, not one per stream.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Hashable
from typing import Any

from asgiref.sync import sync_to_async
from django.db import InterfaceError, OperationalError, connections

from .errors import ChronicumNotFound
from .interfaces import Subscription
from .values import Actum

__all__ = ["PAGE", "ActumRedacted", "Polling", "follow", "redacted_event"]

logger = logging.getLogger("chronica.follow")

PAGE = 200
"""The most acta a follower reads in one statement."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ActumRedacted(Actum):
    """What a follower yields when an actum recorded before its position is redacted
    while it follows: the actum as it is now (``content`` ``""``, ``data`` ``None``,
    ``redacted`` set). An actum recorded after the position comes once, as it is when
    read (already redacted, perhaps), as a plain ``Actum``. The API's stream sends it
    as an ``event: redacted`` (with no ``id:``, so that a reconnection resumes where
    it was)."""


def redacted_event(actum: Actum) -> ActumRedacted:
    return ActumRedacted(**{f.name: getattr(actum, f.name) for f in dataclasses.fields(Actum)})


Page = tuple[list[Actum], int] | tuple[list[Actum], int, bool] | None

Read = Callable[[int, int], Awaitable[Page]]
"""``read(position, limit)``: ``BaseStore.acta_after`` for one follower (a third
item ``True``: cut short by the byte budget, read on at once)."""

# The reads under way, by event loop, what is read (store, owner, chronicum, filters),
# the news generation and the position.
_reads: dict[tuple[Any, ...], asyncio.Future[Page]] = {}


async def follow(
    chronicum_id: str,
    read: Read,
    first: Page,
    news: Subscription,
    interval: float,
    shared: Hashable | None = None,
) -> AsyncGenerator[Actum, None]:
    """The acta of ``first`` (a page already read), then every actum ``read`` finds after
    its position, oldest first, until the caller stops; ``ChronicumNotFound`` once the
    chronicum is gone. ``news`` is closed at the end.

    ``news`` must have been subscribed before the loop's first read: whatever commits
    after that wakes the follower, or is read by that read anyway.
    ``shared``: what the read reads (the same key, the same answer for the same
    position); followers with equal keys share reads. ``None``: never shared.
    """
    loop = asyncio.get_running_loop()
    page: Page = first
    # The first page was read before ``news`` was subscribed: read again at once, so
    # that a write committed between the two is not left for the next poll.
    again = True
    failures = 0
    try:
        while True:
            if page is None:
                raise ChronicumNotFound(chronicum_id)
            acta, position, *cut = page
            for actum in acta:
                yield actum
            # (the redactions a page starts with do not count towards a full page)
            read_acta = sum(1 for actum in acta if not isinstance(actum, ActumRedacted))
            if not (again or read_acta >= PAGE or any(cut)):
                # Until the next multiple of the interval: idle followers wake together.
                await news.wait(interval - loop.time() % interval)
            again = False
            while True:
                try:
                    page = await _read(loop, shared, news, read, position, interval)
                    break
                except (OperationalError, InterfaceError) as exc:
                    failures += 1
                    if failures == 1:
                        logger.warning(
                            "chronica: a read of %r failed; reading again on a fresh connection",
                            chronicum_id,
                            exc_info=exc,
                        )
                    await _drop_broken_connections()
                    await asyncio.sleep(min(RETRY * 2 ** (failures - 1), interval))
            failures = 0
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
    key = (loop, shared, getattr(news, "generation", 0), position)
    task = _reads.get(key)
    if task is None:
        task = _reads[key] = asyncio.ensure_future(read(position, PAGE))
        keep = min(interval / 4, KEEP)
        task.add_done_callback(lambda done: _done(loop, key, done, keep))
    # Shielded: a follower that goes away must not cancel the read of the others.
    return await asyncio.shield(task)


RETRY = 0.05
"""Seconds before the first new read after a read failed; each next one waits twice as
long, up to the poll interval."""


async def _drop_broken_connections() -> None:
    # In the thread the sync reads run in (asgiref's thread-sensitive one, as theirs).
    await sync_to_async(_close_unusable)()


def _close_unusable() -> None:
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close_if_unusable_or_obsolete()


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
