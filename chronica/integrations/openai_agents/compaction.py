"""The OpenAI Agents SDK's compaction hooks of ``ChronicaSession``, on
``chronica.services.compact``: a compacted history is recorded beside the long one, in
one write, and nothing any agent wrote is deleted.

* ``get_items`` reads the compacted window (``get_acta(compacted=True)``);
* ``_atomic_replace_items(items)`` (the SDK's whole-history replacement) records
  ``items`` as the compaction of every actum of the chronicum;
* ``_get_compaction_snapshot(limit)`` (the SDK's bounded suffix replacement) reads the
  last ``limit`` items; its ``replace_suffix(start, output)`` records, as one
  compaction through the snapshot's newest actum, the items before the replaced suffix
  (less a leading prefix the SDK prunes) and ``output``, and answers ``False`` (writing
  nothing) where the stored suffix changed since the snapshot;
* ``clear_session`` deletes the chronicum only where every actum in it is this
  session's; where another writer's acta are there (the person through the API, an
  ADK agent), it records a compaction of no items (one marker actum the session never
  reads back), so the SDK reads ``[]`` and the others keep what they wrote.

A compaction that stands for nothing is :data:`CLEARED`: one system thought whose
``data`` the session skips.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from agents.items import TResponseInputItem

from ... import ActorKind, Actum, ActumKind, ChronicumNotFound

__all__ = ["CLEARED", "CompactionHooks", "Snapshot", "is_cleared"]

CLEARED = {"type": "chronica.cleared"}
"""The ``data`` of the one actum of a compaction that stands for no item."""


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """What the SDK's ``_get_compaction_snapshot`` answers (its ``_CompactionSnapshot``,
    read by these three attributes): the last items, whether they are all of the
    history, and the replacement of a suffix of them."""

    items: list[TResponseInputItem]
    complete: bool
    replace_suffix: Callable[[int, list[TResponseInputItem]], Awaitable[bool]]


async def _settled(awaitable: Awaitable[bool]) -> bool:
    """Await a write to its outcome even if the caller is cancelled meanwhile; the
    cancellation is raised once the outcome is known."""
    task = asyncio.ensure_future(awaitable)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError as exc:
            cancelled = cancelled or exc
    if cancelled is not None:
        if not task.cancelled():
            task.exception()
        raise cancelled
    return task.result()


def is_cleared(actum: Actum) -> bool:
    """Whether ``actum`` is the marker of a compaction of no items."""
    return bool(actum.compacts) and actum.data == CLEARED


class CompactionHooks:
    """The compaction hooks the SDK looks for on a session (mixed into
    ``ChronicaSession``, which supplies the calls and the item conversions)."""

    session_id: str
    owner_id: str
    _calls: Any
    _to_actum: Callable[[Any], Actum]
    _to_item: Callable[[Actum], TResponseInputItem]
    _is_own: Callable[[Actum], bool]

    def _marker(self) -> Actum:
        return Actum(
            chronicum_id=self.session_id,
            kind=ActumKind.THOUGHT,
            actor_kind=ActorKind.SYSTEM,
            actor="openai-agents",
            content="(this session's history was cleared)",
            data=dict(CLEARED),
        )

    def _copy(self, actum: Actum) -> Actum:
        """An actum of the view, to be recorded again in a compaction."""
        return Actum(
            chronicum_id=self.session_id,
            kind=actum.kind,
            actor_kind=actum.actor_kind,
            actor=actum.actor,
            content=actum.content,
            call_id=actum.call_id,
            data=actum.data,
        )

    async def _view(self, last_n: int = 0) -> list[Actum]:
        try:
            acta: list[Actum] = await self._calls.aget_acta(
                self.owner_id, self.session_id, last_n=last_n, compacted=True
            )
        except ChronicumNotFound:
            return []
        return acta

    async def _newest(self) -> Actum | None:
        try:
            newest: list[Actum] = await self._calls.aget_acta(
                self.owner_id, self.session_id, last_n=1
            )
        except ChronicumNotFound:
            return None
        return newest[0] if newest else None

    async def _compact(self, acta: list[Actum], through: str) -> None:
        await self._calls.acompact(
            self.owner_id, self.session_id, acta or [self._marker()], through=through
        )

    def _overrides_storage(self) -> bool:
        # A subclass that changes how items are read or written must not be bypassed
        # (as the SDK's own stores refuse their hooks to subclasses that do). The
        # session class whose storage these hooks know mixes them in (ChronicaSession).
        known = next(c for c in type(self).__mro__ if CompactionHooks in c.__bases__)
        return any(
            getattr(type(self), name) is not getattr(known, name)
            for name in ("get_items", "add_items", "pop_item", "clear_session")
        )

    async def _atomic_replace_items(self, items: list[TResponseInputItem]) -> bool:
        """Record ``items`` as the compaction of the whole chronicum, in one write."""
        if self._overrides_storage():
            return False
        acta = [self._to_actum(item) for item in items]
        newest = await self._newest()
        if newest is None:
            if acta:
                await self._calls.arecord_acta(self.owner_id, acta)
            return True
        await self._compact(acta, newest.id)
        return True

    async def _get_compaction_snapshot(
        self,
        limit: int,
        *,
        prune_prefix: Callable[[TResponseInputItem], bool] | None = None,
    ) -> Snapshot | None:
        """The last ``limit`` items of the compacted view, whether they are all of it, and
        the replacement of a suffix of them by one compaction."""
        if self._overrides_storage():
            return None
        view = [a for a in await self._view() if not is_cleared(a)]
        rows = view[-limit:] if limit > 0 else []
        complete = len(rows) == len(view)
        items = [self._to_item(actum) for actum in rows]

        async def replace_suffix(start: int, output: list[TResponseInputItem]) -> bool:
            expected = rows[start:]
            if not expected:
                return False

            async def replace() -> bool:
                current = [a for a in await self._view() if not is_cleared(a)]
                tail = current[-len(expected) :]
                if [a.id for a in tail] != [a.id for a in expected] or len(current) < len(expected):
                    return False
                newest = await self._newest()
                if newest is None:
                    return False
                prefix = current[: len(current) - len(expected)]
                if prune_prefix is not None:
                    kept = 0
                    while kept < len(prefix) and prune_prefix(self._to_item(prefix[kept])):
                        kept += 1
                    prefix = prefix[kept:]
                acta = [self._copy(a) for a in prefix] + [self._to_actum(i) for i in output]
                # The view still ends with the snapshot's suffix: nothing was recorded
                # since but, at most, this compaction's own acta, so through the newest.
                await self._compact(acta, newest.id)
                return True

            return await _settled(replace())

        return Snapshot(items, complete, replace_suffix)

    async def _clear_or_hide(self, delete: Callable[[], Awaitable[None]]) -> None:
        """``clear_session``: delete where every actum is this session's, else hide the
        session's history behind a compaction of no items."""
        try:
            acta: list[Actum] = await self._calls.aget_acta(self.owner_id, self.session_id)
        except ChronicumNotFound:
            return
        if all(self._is_own(actum) for actum in acta):
            await delete()
            return
        newest = acta[-1]
        if is_cleared(newest):
            return
        await self._compact([], newest.id)
