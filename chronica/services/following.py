"""Following: the acta recorded after a point, as they come (``afollow``)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Iterable
from typing import Any

from asgiref.sync import sync_to_async

from ..errors import ChronicumNotFound, InvalidQuery
from ..follow import PAGE, ActumRedacted, Polling, follow, redacted_event
from ..interfaces import FollowPage
from ..validation.identifiers import check_owner, storable
from ..validation.queries import build_query, check_after
from ..values import ActaQuery, Actum
from ..windows import matcher
from .base import ActorKinds, ChronicariusBase, Kinds

__all__ = ["Follower", "Following"]


class Following(ChronicariusBase):
    """``afollow``: the acta recorded after a point, as they are recorded."""

    def afollow(
        self,
        owner_id: str,
        chronicum_id: str,
        *,
        after: str | None = None,
        kinds: Kinds = None,
        actor_kinds: ActorKinds = None,
        actors: Iterable[str] | str | None = None,
        max_bytes: int | None = None,
        raw_data: bool = False,
        compacted: bool = False,
    ) -> Follower:
        """Every actum recorded after the actum ``after`` (``None``: from the moment the
        follow starts), each once, in write order, filtered like :meth:`get_acta`,
        until the caller stops (``break``, or ``aclose()``): an async iterator.

        It starts at its first ``anext()``, or earlier, where the caller needs every
        check answered before it goes on (an HTTP stream before its first byte):
        ``await`` it, or call its ``start()`` from sync code, and it is returned
        started. Starting raises ``ChronicumNotFound`` as every call does, and
        ``InvalidQuery`` for a bad filter or an ``after`` that is not an actum of the
        chronicum; once started, only ``ChronicumNotFound`` comes, if the chronicum is
        deleted while followed. On PostgreSQL a NOTIFY sent by each committing write
        wakes the follower; elsewhere it reads again every
        ``CHRONICA["FOLLOW_POLL_INTERVAL"]`` seconds (``poll_interval``).

        ``max_bytes`` (a positive int): each read of the store holds acta of at most
        that many UTF-8 bytes of content and data (one actum whatever its size), so
        that a long backlog is read a budget at a time, every actum still in order
        (``CHRONICA["API_MAX_RESPONSE_BYTES"]`` in the API's stream). ``raw_data``: each
        actum's ``data`` as its stored JSON text (``chronica.RawJSON``).
        ``compacted``: only the acta of the compacted view (see ``get_acta``) at the
        moment each is read: a new compaction's acta come, and what a compaction
        already hid when the follower reads on does not.
        """

        def start() -> tuple[ActaQuery, FollowPage]:
            check_owner(owner_id)
            query = build_query(kinds=kinds, actor_kinds=actor_kinds, actors=actors)
            if max_bytes is not None:
                if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
                    raise InvalidQuery(f"max_bytes must be a positive int, not {max_bytes!r}")
                query = dataclasses.replace(query, max_bytes=max_bytes)
            if not isinstance(raw_data, bool):
                raise InvalidQuery(f"raw_data must be True or False, not {raw_data!r}")
            query = dataclasses.replace(query, raw_data=raw_data)
            query = self._compacted(query, compacted)
            resume = check_after(after)
            store = self._require(self._following, "follow a chronicum", "supports_follow")
            self._check_ids(owner_id, chronicum_id)
            if resume is not None and not storable(resume):
                # No store can hold such an ID: no actum of this chronicum, once the
                # owner is checked.
                if store.acta_after(owner_id, chronicum_id, query, None, 0) is None:
                    raise ChronicumNotFound(chronicum_id)
                raise InvalidQuery(f"after={resume!r} is not an actum of this chronicum")
            first = store.acta_after(owner_id, chronicum_id, query, resume, PAGE)
            if first is None:
                raise ChronicumNotFound(chronicum_id)
            return query, first

        def read_from(query: ActaQuery, first: FollowPage) -> AsyncGenerator[Actum, None]:
            # Subscribed before the first read of the loop: a write that commits after
            # that read wakes this follower; one before it is in it.
            store = self.store
            news = store.subscribe(chronicum_id) if hasattr(store, "subscribe") else None
            after = sync_to_async(store.acta_after)  # type: ignore[attr-defined]
            read: Callable[[int, int], Awaitable[Any]] = lambda position, limit: after(  # noqa: E731
                owner_id, chronicum_id, query, position, limit
            )
            # Redactions of acta at or before the position read from, since (about) the
            # start: shared by the followers that start within the same minute.
            since = dt.datetime.now(dt.UTC) - REDACTION_MARGIN
            shared_since = since.replace(second=0, microsecond=0)
            if getattr(store, "supports_forget", False):
                read = with_redactions(store, owner_id, chronicum_id, query, shared_since, read)
            acta = follow(
                chronicum_id,
                read,
                first,
                news or Polling(),
                self.poll_interval,
                # Followers of the same store, owner, chronicum and filters share reads.
                shared=(id(store), owner_id, chronicum_id, query, shared_since),
            )
            return once_each(acta, since)

        return Follower(start, sync_to_async(start), read_from)


REDACTION_MARGIN = dt.timedelta(seconds=2)
"""How long before its start a follower also takes redactions (a redaction's moment is
taken just before it commits)."""


def with_redactions(
    store: Any,
    owner_id: str,
    chronicum_id: str,
    query: ActaQuery,
    since: dt.datetime,
    read: Callable[[int, int], Awaitable[Any]],
) -> Callable[[int, int], Awaitable[Any]]:
    """``read``, whose page starts with the acta at or before its position (that pass
    the query's filters) redacted since ``since``, as ``ActumRedacted``."""
    redactions = sync_to_async(store.redactions)
    keep = matcher(query)

    async def read_both(position: int, limit: int) -> Any:
        page = await read(position, limit)
        if page is None:
            return None
        found = await redactions(owner_id, chronicum_id, since, position)
        if not found:
            return page
        events = [redacted_event(a) for a in found if keep(a)]
        return (events + page[0], *page[1:])

    return read_both


async def once_each(
    acta: AsyncGenerator[Actum, None], since: dt.datetime
) -> AsyncGenerator[Actum, None]:
    """The follower's acta, each redaction once, and none from before ``since``."""
    told: set[str] = set()
    try:
        async for actum in acta:
            if isinstance(actum, ActumRedacted):
                redaction = actum.redacted
                if actum.id in told or redaction is None or redaction.at < since:
                    continue
                told.add(actum.id)
            yield actum
    finally:
        await acta.aclose()


class Follower(AsyncGenerator[Actum, None]):
    """What :meth:`Chronicarius.afollow` returns: the acta recorded after its start,
    as an async iterator, started by its first ``anext()``, by ``await``, or by
    ``start()``. Close it (``aclose()``, ``break`` out of ``async for``, or
    ``contextlib.aclosing``)."""

    def __init__(
        self,
        start: Callable[[], tuple[ActaQuery, FollowPage]],
        astart: Callable[[], Awaitable[tuple[ActaQuery, FollowPage]]],
        read_from: Callable[[ActaQuery, FollowPage], AsyncGenerator[Actum, None]],
    ) -> None:
        self._start, self._astart, self._read_from = start, astart, read_from
        self._from: tuple[ActaQuery, FollowPage] | None = None
        self._acta: AsyncGenerator[Actum, None] | None = None
        self._done = False

    def start(self) -> Follower:
        """Run every check and take the position to follow from now, in sync code;
        the follower is then read in any event loop."""
        if self._from is None and not self._done:
            self._from = self._started(self._start)
        return self

    def __await__(self) -> Generator[Any, None, Follower]:
        return self._astarted().__await__()

    async def _astarted(self) -> Follower:
        if self._from is None and not self._done:
            try:
                self._from = await self._astart()
            except BaseException:
                self._done = True
                raise
        return self

    def _started(
        self, start: Callable[[], tuple[ActaQuery, FollowPage]]
    ) -> tuple[ActaQuery, FollowPage]:
        try:
            return start()
        except BaseException:
            self._done = True
            raise

    async def __anext__(self) -> Actum:
        if self._acta is None:
            await self._astarted()
            if self._done or self._from is None:
                raise StopAsyncIteration
            self._acta = self._read_from(*self._from)
        return await self._acta.__anext__()

    async def asend(self, value: None) -> Actum:
        return await self.__anext__()

    async def athrow(self, *args: Any) -> Actum:
        if self._acta is None:
            self._done = True
            raise args[1] if len(args) > 1 and args[1] is not None else args[0]
        return await self._acta.athrow(*args)

    async def aclose(self) -> None:
        self._done = True
        acta, self._acta = self._acta, None
        if acta is not None:
            await acta.aclose()
