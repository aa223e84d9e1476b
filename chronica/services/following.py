"""Following: the acta recorded after a point, as they come (``afollow``)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Iterable
from typing import Any

from asgiref.sync import sync_to_async

from ..errors import ChronicumNotFound, InvalidQuery
from ..follow import PAGE, Polling, follow
from ..interfaces import FollowPage
from ..validation.identifiers import check_owner, storable
from ..validation.queries import build_query, check_after
from ..values import ActaQuery, Actum
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
            read = sync_to_async(store.acta_after)  # type: ignore[attr-defined]
            return follow(
                chronicum_id,
                lambda position, limit: read(owner_id, chronicum_id, query, position, limit),
                first,
                news or Polling(),
                self.poll_interval,
                # Followers of the same store, owner, chronicum and filters share reads.
                shared=(id(store), owner_id, chronicum_id, query),
            )

        return Follower(start, sync_to_async(start), read_from)


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
