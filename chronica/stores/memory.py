"""A store that keeps everything in this process: for tests and development.

Thread-safe: a lock per chronicum guards its acta and its idempotency keys.
Its keys grow without bound, and nothing survives the process.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import datetime as dt
import itertools
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ..errors import ChronicumExists, ChronicumNotFound, InvalidQuery, StateConflict
from ..states import DocumentKey, apply_all, document_key
from ..tokens import content_tokens
from ..values import (
    ActaQuery,
    Actum,
    Chronicum,
    NamespaceListing,
    Recorded,
    StateChange,
    StateScope,
    StateView,
)
from ..windows import cut_page, cut_window, matcher

__all__ = ["InMemoryStore"]

_T = TypeVar("_T")


@dataclasses.dataclass
class _Entry:
    chronicum: Chronicum
    acta: list[Actum] = dataclasses.field(default_factory=list)
    tokens: dict[str, int] = dataclasses.field(default_factory=dict)
    # key -> the IDs of the batch that key recorded, in write order
    keys: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    # the follow position of each actum, in step with ``acta``
    positions: list[int] = dataclasses.field(default_factory=list)
    # the chronicum's state and the namespace it is in (None: it has none)
    namespace: str | None = None
    state: dict[str, Any] | None = None
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)


class InMemoryStore:
    """Every capability of a chronica store, in a dict. Not shared between processes."""

    supports_windows = True

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}
        self._positions = itertools.count(1)
        # owner and namespace state documents, under their own lock (taken after an
        # entry's lock, never before one)
        self._shared: dict[DocumentKey, dict[str, Any]] = {}
        self._shared_lock = threading.Lock()

    def _entry(self, chronicum_id: str) -> _Entry:
        try:
            return self._entries[chronicum_id]
        except KeyError:
            raise ChronicumNotFound(chronicum_id) from None

    def _owned(self, chronicum_id: str, owner_id: str) -> _Entry:
        entry = self._entry(chronicum_id)
        if entry.chronicum.owner_id != owner_id:
            raise ChronicumNotFound(chronicum_id)
        return entry

    # -- Store ----------------------------------------------------------------

    def create(self, chronicum: Chronicum) -> None:
        with self._lock:
            if chronicum.id in self._entries:
                raise ChronicumExists(chronicum.id)
            self._entries[chronicum.id] = _Entry(chronicum)

    def get(self, chronicum_id: str) -> Chronicum:
        return self._entry(chronicum_id).chronicum

    def record(self, actum: Actum) -> Actum:
        return self.record_batch([actum], None, [None]).acta[0]

    def record_idempotent(self, actum: Actum, key: str) -> Actum:
        return self.record_batch([actum], key, [None]).acta[0]

    def acta(self, chronicum_id: str, query: ActaQuery) -> list[Actum]:
        acta = self._read(self._entry(chronicum_id), query, None, cut_window)
        assert acta is not None
        return acta

    # -- capabilities ---------------------------------------------------------

    def record_batch(
        self, acta: Sequence[Actum], key: str | None, tokens: Sequence[int | None]
    ) -> Recorded:
        recorded = self._append(self._entry(acta[0].chronicum_id), acta, key, tokens, None)
        assert recorded is not None
        return recorded

    def record_batch_if_owner(
        self,
        owner_id: str,
        acta: Sequence[Actum],
        key: str | None,
        tokens: Sequence[int | None],
    ) -> Recorded | None:
        entry = self._entries.get(acta[0].chronicum_id)
        if entry is None:
            return None
        try:
            return self._append(entry, acta, key, tokens, owner_id)
        except ChronicumNotFound:
            return None  # deleted while we waited for its lock

    def acta_if_owner(
        self, owner_id: str, chronicum_id: str, query: ActaQuery
    ) -> list[Actum] | None:
        entry = self._entries.get(chronicum_id)
        return None if entry is None else self._read(entry, query, owner_id, cut_window)

    def acta_page_if_owner(
        self, owner_id: str, chronicum_id: str, query: ActaQuery
    ) -> tuple[list[Actum], bool] | None:
        entry = self._entries.get(chronicum_id)
        return None if entry is None else self._read(entry, query, owner_id, cut_page)

    def _append(
        self,
        entry: _Entry,
        acta: Sequence[Actum],
        key: str | None,
        tokens: Sequence[int | None],
        owner_id: str | None,
    ) -> Recorded | None:
        """Append to ``entry`` under its lock, where the owner is checked too: the entry
        looked up before the lock may have been deleted, and its ID taken by another
        owner, meanwhile (``None`` for another owner's, as ``record_batch_if_owner``)."""
        with entry.lock:
            if self._entries.get(entry.chronicum.id) is not entry:
                raise ChronicumNotFound(entry.chronicum.id)  # deleted while we waited
            if owner_id is not None and entry.chronicum.owner_id != owner_id:
                return None
            return self._append_locked(entry, acta, key, tokens)

    def _replay(self, entry: _Entry, key: str | None) -> Recorded | None:
        if key is not None and key in entry.keys:
            batch = set(entry.keys[key])
            stored = [a for a in entry.acta if a.id in batch]
            if stored and stored[0].id == entry.keys[key][0]:
                return Recorded(stored, replayed=True)
        return None

    def _append_locked(
        self, entry: _Entry, acta: Sequence[Actum], key: str | None, tokens: Sequence[int | None]
    ) -> Recorded:
        if (replay := self._replay(entry, key)) is not None:
            return replay
        if not acta:
            return Recorded([])
        at = dt.datetime.now(dt.UTC)
        stored = [dataclasses.replace(actum, at=at) for actum in acta]
        entry.acta.extend(stored)
        entry.positions.extend(next(self._positions) for _ in stored)
        for actum, count in zip(stored, tokens, strict=True):
            if count is not None:
                entry.tokens[actum.id] = count
        if key is not None:
            entry.keys[key] = [actum.id for actum in stored]
        entry.chronicum = dataclasses.replace(entry.chronicum, last_activity_at=at)
        return Recorded(stored)

    def _read(
        self,
        entry: _Entry,
        query: ActaQuery,
        owner_id: str | None,
        cut: Callable[[list[Actum], ActaQuery, Callable[[Actum], int]], _T],
        *,
        locked: bool = False,
    ) -> _T | None:
        """``cut`` (the window, or the page) of ``query`` on ``entry``, from the acta
        read under its lock (already held, with ``locked``) with the owner checked
        there (``None`` for another owner's, or one deleted meanwhile)."""
        with contextlib.nullcontext() if locked else entry.lock:
            if owner_id is not None and (
                entry.chronicum.owner_id != owner_id
                or self._entries.get(entry.chronicum.id) is not entry
            ):
                return None
            acta = list(entry.acta)
            tokens = dict(entry.tokens)

        def count(actum: Actum) -> int:
            found = tokens.get(actum.id)
            return content_tokens(actum.content) if found is None else found

        return cut(acta, query, count)

    def list_chronica(self, owner_id: str, limit: int, after: Chronicum | None) -> list[Chronicum]:
        with self._lock:
            mine = [e.chronicum for e in self._entries.values() if e.chronicum.owner_id == owner_id]
        mine.sort(key=lambda c: c.id)
        mine.sort(key=lambda c: c.last_activity_at, reverse=True)
        if after is not None:
            at, last_id = after.last_activity_at, after.id
            mine = [c for c in mine if (c.last_activity_at, last_id) < (at, c.id)]
        return mine[:limit]

    def delete(self, chronicum_id: str, owner_id: str) -> None:
        with self._lock:
            entry = self._owned(chronicum_id, owner_id)
            with entry.lock:
                del self._entries[chronicum_id]

    def pop(self, chronicum_id: str, owner_id: str) -> Actum | None:
        entry = self._owned(chronicum_id, owner_id)
        with entry.lock:
            if self._entries.get(chronicum_id) is not entry:
                raise ChronicumNotFound(chronicum_id)
            if not entry.acta:
                return None
            actum = entry.acta.pop()
            entry.positions.pop()
            entry.tokens.pop(actum.id, None)
            return actum

    def follow_position(self, owner_id: str, chronicum_id: str, after: str | None) -> int | None:
        entry = self._entries.get(chronicum_id)
        if entry is None or entry.chronicum.owner_id != owner_id:
            return None
        with entry.lock:
            if after is None:
                return entry.positions[-1] if entry.positions else 0
            for actum, position in zip(
                reversed(entry.acta), reversed(entry.positions), strict=True
            ):
                if actum.id == after:
                    return position
        raise InvalidQuery(f"after={after!r} is not an actum of this chronicum")

    def acta_after(
        self, owner_id: str, chronicum_id: str, query: ActaQuery, position: int, limit: int
    ) -> tuple[list[Actum], int] | None:
        entry = self._entries.get(chronicum_id)
        if entry is None or entry.chronicum.owner_id != owner_id:
            return None
        with entry.lock:
            newer = [
                (a, p) for a, p in zip(entry.acta, entry.positions, strict=True) if p > position
            ]
        keep = matcher(query)
        page = [(a, p) for a, p in newer if keep(a)][:limit]
        if len(page) >= limit:
            return [a for a, _ in page], page[-1][1]
        return [a for a, _ in page], max([position, *(p for _, p in newer)])

    # -- state ----------------------------------------------------------------

    def write_state(
        self,
        owner_id: str,
        chronicum_id: str,
        acta: Sequence[Actum],
        key: str | None,
        tokens: Sequence[int | None],
        changes: Sequence[StateChange],
        create: Chronicum | None,
    ) -> Recorded | None:
        with contextlib.ExitStack() as held:
            if create is not None:
                # Created under its own lock: nobody sees it before its state is in.
                entry: _Entry | None = _Entry(create)
                assert entry is not None
                held.enter_context(entry.lock)
                with self._lock:
                    if create.id in self._entries:
                        raise ChronicumExists(create.id)
                    self._entries[create.id] = entry
            else:
                entry = self._entries.get(chronicum_id)
                if entry is None:
                    return None
                held.enter_context(entry.lock)
            held.enter_context(self._shared_lock)
            if self._entries.get(chronicum_id) is not entry:
                return None  # deleted while we waited for its lock
            if entry.chronicum.owner_id != owner_id:
                return None
            if (replay := self._replay(entry, key)) is not None:
                return replay
            for change in changes:
                if change.scope is StateScope.CHRONICUM and entry.namespace not in (
                    None,
                    change.namespace,
                ):
                    raise StateConflict(
                        f"chronicum {chronicum_id!r} keeps its state in {entry.namespace!r},"
                        f" not {change.namespace!r}"
                    )
            before: dict[DocumentKey, dict[str, Any] | None] = {
                key: self._shared.get(key)
                for key in (document_key(c, owner_id, chronicum_id) for c in changes)
            }
            if entry.namespace is not None:
                before[(StateScope.CHRONICUM, entry.namespace, chronicum_id)] = entry.state
            try:
                after = apply_all(before, changes, owner_id, chronicum_id)
            except StateConflict:
                if create is not None:
                    with self._lock:
                        del self._entries[create.id]
                raise
            recorded = self._append_locked(entry, acta, key, tokens)
            for (scope, namespace, subject), document in after.items():
                if scope is StateScope.CHRONICUM:
                    entry.namespace, entry.state = namespace, document
                else:
                    self._shared[(scope, namespace, subject)] = document
            return recorded

    def read_state(
        self,
        owner_id: str,
        namespace: str,
        chronicum_id: str | None,
        query: ActaQuery | None,
    ) -> StateView:
        entry = None if chronicum_id is None else self._entries.get(chronicum_id)
        chronicum, state, acta = None, None, None
        if entry is not None:
            with entry.lock:
                if (
                    entry.chronicum.owner_id == owner_id
                    and self._entries.get(entry.chronicum.id) is entry
                ):
                    chronicum = entry.chronicum
                    if entry.namespace == namespace:
                        state = copy.deepcopy(entry.state)
                    if query is not None:
                        acta = self._read(entry, query, None, cut_window, locked=True)
        with self._shared_lock:
            owner = copy.deepcopy(self._shared.get((StateScope.OWNER, namespace, owner_id), {}))
            shared = copy.deepcopy(self._shared.get((StateScope.NAMESPACE, namespace, ""), {}))
        return StateView(chronicum, state, owner, shared, acta)

    def list_namespace(self, namespace: str, owner_id: str | None) -> NamespaceListing:
        with self._lock:
            entries = [
                e
                for e in self._entries.values()
                if e.namespace == namespace
                and (owner_id is None or e.chronicum.owner_id == owner_id)
            ]
        listed = []
        for entry in entries:
            with entry.lock:
                listed.append((entry.chronicum, copy.deepcopy(entry.state or {})))
        listed.sort(key=lambda pair: (pair[0].last_activity_at, pair[0].owner_id, pair[0].id))
        owners = {chronicum.owner_id for chronicum, _ in listed}
        with self._shared_lock:
            owner_states = {
                subject: copy.deepcopy(document)
                for (scope, ns, subject), document in self._shared.items()
                if scope is StateScope.OWNER and ns == namespace and subject in owners
            }
            shared = copy.deepcopy(self._shared.get((StateScope.NAMESPACE, namespace, ""), {}))
        return NamespaceListing(listed, owner_states, shared)

    def __repr__(self) -> str:
        return f"<InMemoryStore chronica={len(self._entries)}>"
