"""A store that keeps everything in this process: for tests and development.

Thread-safe: a lock per chronicum guards its acta, its keys and its state; what the
owner check and the work need happens under it. Its keys grow without bound, and
nothing survives the process.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import hashlib
import itertools
import secrets
import threading
from collections.abc import Sequence
from typing import Any

from ...errors import ChronicumExists, ChronicumNotFound, InvalidQuery, StateConflict
from ...interfaces import Create, FollowPage, WindowPage
from ...states import DocumentKey, apply_all, document_key
from ...tokens import content_tokens
from ...validation.jsondata import RawJSON, dumps_data
from ...values import (
    ActaQuery,
    Actum,
    Chronicum,
    Erasure,
    NamespaceListing,
    Recorded,
    StateChange,
    StateScope,
    StateView,
)
from ...windows import compacted_view, cut_page, matcher, size
from .entry import Entry
from .forgetting import ForgettingMixin
from .search import SearchMixin

__all__ = ["InMemoryStore"]


class InMemoryStore(ForgettingMixin, SearchMixin):
    """Every ability of a chronica store, in a dict. Not shared between processes."""

    supports_append = True
    supports_window = True
    supports_listing = True
    supports_delete = True
    supports_pop = True
    supports_follow = True
    supports_state = True
    supports_fork = True
    supports_compaction = True
    #: A plain search: words compared in Python (``chronica.search``), every actum of
    #: the owner read; ranks count the matching words. For tests and development.
    supports_search = True
    supports_forget = True

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, Entry] = {}
        self._positions = itertools.count(1)
        # owner and namespace state documents, under their own lock (taken after an
        # entry's lock, never before one)
        self._shared: dict[DocumentKey, dict[str, Any]] = {}
        self._shared_lock = threading.Lock()
        self.erasures: list[Erasure] = []

    def __repr__(self) -> str:
        return f"<InMemoryStore chronica={len(self._entries)}>"

    def create(self, chronicum: Chronicum) -> None:
        with self._lock:
            if chronicum.id in self._entries:
                raise ChronicumExists(chronicum.id)
            self._entries[chronicum.id] = Entry(chronicum)

    def get(self, chronicum_id: str) -> Chronicum:
        try:
            return self._entries[chronicum_id].chronicum
        except KeyError:
            raise ChronicumNotFound(chronicum_id) from None

    def _locked(self, owner_id: str | None, chronicum_id: str) -> Entry | None:
        """The entry of ``owner_id``'s chronicum, its lock taken (the caller releases
        it); ``None``, no lock held, where it is missing or another owner's. The entry
        looked up before the lock may have been deleted meanwhile, and its ID taken."""
        entry = self._entries.get(chronicum_id)
        if entry is None:
            return None
        entry.lock.acquire()
        if self._entries.get(chronicum_id) is not entry or (
            owner_id is not None and entry.chronicum.owner_id != owner_id
        ):
            entry.lock.release()
            return None
        return entry

    def _created(self, owner_id: str | None, chronicum_id: str, create: Create) -> Entry | None:
        """``_locked``, after creating the chronicum as ``create`` says."""
        now = dt.datetime.now(dt.UTC)
        with self._lock:
            taken = chronicum_id in self._entries
            if create == "new" and taken:
                raise ChronicumExists(chronicum_id)
            if not taken and owner_id is not None:
                self._entries[chronicum_id] = Entry(Chronicum(chronicum_id, owner_id, now, now))
        return self._locked(owner_id, chronicum_id)

    # -- append ---------------------------------------------------------------

    def append(
        self,
        owner_id: str | None,
        chronicum_id: str,
        acta: Sequence[Actum],
        *,
        key: str | None = None,
        tokens: Sequence[int | None] | None = None,
        state: Sequence[StateChange] = (),
        create: Create | None = None,
        credential: str | None = None,
    ) -> Recorded | None:
        # (credentials live on a Django database: this store keeps none)
        entry = (
            self._locked(owner_id, chronicum_id)
            if create is None
            else self._created(owner_id, chronicum_id, create)
        )
        if entry is None:
            return None
        try:
            if (replay := self._replay(entry, key)) is not None:
                return replay
            with self._shared_lock:
                try:
                    after = self._apply(entry, owner_id or entry.chronicum.owner_id, state)
                except StateConflict:
                    if create == "new":
                        with self._lock:
                            del self._entries[chronicum_id]  # nothing of the write stays
                    raise
                recorded = self._add(entry, acta, key, tokens or [None] * len(acta))
                for (scope, namespace, subject), document in after.items():
                    if scope is StateScope.CHRONICUM:
                        entry.namespace, entry.state = namespace, document
                    else:
                        self._shared[(scope, namespace, subject)] = document
            return recorded
        finally:
            entry.lock.release()

    def _replay(self, entry: Entry, key: str | None) -> Recorded | None:
        if key is not None and key in entry.keys:
            batch = set(entry.keys[key])
            stored = [a for a in entry.acta if a.id in batch]
            if stored and stored[0].id == entry.keys[key][0]:
                return Recorded(stored, replayed=True)
        return None

    def _apply(
        self, entry: Entry, owner_id: str, changes: Sequence[StateChange]
    ) -> dict[DocumentKey, dict[str, Any]]:
        """The documents ``changes`` make (``StateConflict`` if they cannot)."""
        if not changes:
            return {}
        chronicum_id = entry.chronicum.id
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
        return apply_all(before, changes, owner_id, chronicum_id)

    def _add(
        self,
        entry: Entry,
        acta: Sequence[Actum],
        key: str | None,
        tokens: Sequence[int | None],
        at: dt.datetime | None = None,
    ) -> Recorded:
        if not acta:
            return Recorded([])
        at = at or dt.datetime.now(dt.UTC)
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

    # -- compaction and fork --------------------------------------------------------

    def compact(
        self,
        owner_id: str | None,
        chronicum_id: str,
        acta: Sequence[Actum],
        through: str,
        *,
        key: str | None = None,
        tokens: Sequence[int | None] | None = None,
        credential: str | None = None,
    ) -> Recorded | None:
        entry = self._locked(owner_id, chronicum_id)
        if entry is None:
            return None
        try:
            if (replay := self._replay(entry, key)) is not None:
                return replay
            if not any(actum.id == through for actum in entry.acta):
                raise InvalidQuery(f"through={through!r} is not an actum of this chronicum")
            at = dt.datetime.now(dt.UTC)
            earlier = [actum.at for actum in entry.acta if actum.compacts and actum.at]
            if earlier and at <= max(earlier):
                at = max(earlier) + dt.timedelta(microseconds=1)
            batch = [dataclasses.replace(actum, compacts=through) for actum in acta]
            return self._add(entry, batch, key, tokens or [None] * len(acta), at)
        finally:
            entry.lock.release()

    def fork(
        self, owner_id: str, chronicum_id: str, through: str | None, new: Chronicum
    ) -> Chronicum | None:
        entry = self._locked(owner_id, chronicum_id)
        if entry is None:
            return None
        try:
            acta, tokens = list(entry.acta), dict(entry.tokens)
        finally:
            entry.lock.release()
        if through is not None:
            end = next((i for i, a in enumerate(acta) if a.id == through), -1)
            if end < 0:
                raise InvalidQuery(f"through={through!r} is not an actum of this chronicum")
            acta = acta[: end + 1]
        salt = secrets.token_hex(16)

        def copied(actum_id: str) -> str:
            return hashlib.md5((salt + actum_id).encode()).hexdigest()

        copies = [
            dataclasses.replace(
                actum,
                chronicum_id=new.id,
                id=copied(actum.id),
                compacts=copied(actum.compacts) if actum.compacts else "",
            )
            for actum in acta
        ]
        with self._lock:
            if new.id in self._entries:
                raise ChronicumExists(new.id)
            forked = Entry(new)
            forked.acta = copies
            forked.positions = [next(self._positions) for _ in copies]
            forked.tokens = {
                copy.id: tokens[actum.id]
                for actum, copy in zip(acta, copies, strict=True)
                if actum.id in tokens
            }
            self._entries[new.id] = forked
        return new

    # -- reading --------------------------------------------------------------

    def window(
        self, owner_id: str | None, chronicum_id: str, query: ActaQuery
    ) -> WindowPage | None:
        entry = self._locked(owner_id, chronicum_id)
        if entry is None:
            return None
        try:
            acta, tokens = list(entry.acta), dict(entry.tokens)
        finally:
            entry.lock.release()

        def count(actum: Actum) -> int:
            found = tokens.get(actum.id)
            return content_tokens(actum.content) if found is None else found

        if query.compacted:
            acta = compacted_view(acta)
        window, more = cut_page(acta, query, count)
        return _as_read(window, query), more

    def list_chronica(self, owner_id: str, limit: int, after: Chronicum | None) -> list[Chronicum]:
        with self._lock:
            mine = [e.chronicum for e in self._entries.values() if e.chronicum.owner_id == owner_id]
        mine.sort(key=lambda c: c.id)
        mine.sort(key=lambda c: c.last_activity_at, reverse=True)
        if after is not None:
            at, last_id = after.last_activity_at, after.id
            mine = [c for c in mine if (c.last_activity_at, last_id) < (at, c.id)]
        return mine[:limit]

    def delete(self, owner_id: str, chronicum_id: str) -> bool:
        with self._lock:
            entry = self._entries.get(chronicum_id)
            if entry is None or entry.chronicum.owner_id != owner_id:
                return False
            with entry.lock:
                del self._entries[chronicum_id]
        return True

    def pop(self, owner_id: str, chronicum_id: str) -> Actum | None:
        entry = self._locked(owner_id, chronicum_id)
        if entry is None:
            raise ChronicumNotFound(chronicum_id)
        try:
            if not entry.acta:
                return None
            actum = entry.acta.pop()
            entry.positions.pop()
            entry.tokens.pop(actum.id, None)
            return actum
        finally:
            entry.lock.release()

    def acta_after(
        self,
        owner_id: str,
        chronicum_id: str,
        query: ActaQuery,
        position: int | str | None,
        limit: int,
    ) -> FollowPage | None:
        entry = self._locked(owner_id, chronicum_id)
        if entry is None:
            return None
        try:
            positions = list(zip(entry.acta, entry.positions, strict=True))
        finally:
            entry.lock.release()
        newest = positions[-1][1] if positions else 0
        if position is None:
            return [], newest, False
        if isinstance(position, str):
            found = [p for a, p in positions if a.id == position]
            if not found:
                raise InvalidQuery(f"after={position!r} is not an actum of this chronicum")
            position = found[-1]
        keep = matcher(query)
        if query.compacted:
            shown, match = {id(a) for a in compacted_view([a for a, _ in positions])}, keep
            keep = lambda actum: id(actum) in shown and match(actum)  # noqa: E731
        page: list[tuple[Actum, int]] = []
        room = query.max_bytes
        for actum, at in positions:
            if at <= position or not keep(actum):
                continue
            if len(page) == limit:
                return _as_read([a for a, _ in page], query), page[-1][1], True
            if room is not None:
                room -= size(actum)
                if room < 0 and page:
                    return _as_read([a for a, _ in page], query), page[-1][1], True
            page.append((actum, at))
        return _as_read([a for a, _ in page], query), max(position, newest), False

    # -- state ----------------------------------------------------------------

    def read_state(
        self,
        owner_id: str,
        namespace: str,
        chronicum_id: str | None,
        query: ActaQuery | None,
    ) -> StateView:
        chronicum, state, acta = None, None, None
        entry = None if chronicum_id is None else self._locked(owner_id, chronicum_id)
        if entry is not None:
            try:
                chronicum = entry.chronicum
                if entry.namespace == namespace:
                    state = copy.deepcopy(entry.state)
            finally:
                entry.lock.release()
            if query is not None and chronicum_id is not None:
                page = self.window(owner_id, chronicum_id, query)
                acta = None if page is None else page[0]
        with self._shared_lock:
            owner = copy.deepcopy(self._shared.get((StateScope.OWNER, namespace, owner_id), {}))
            shared = copy.deepcopy(self._shared.get((StateScope.NAMESPACE, namespace, ""), {}))
        return StateView(chronicum, state, owner, shared, acta)

    def list_namespace(self, owner_id: str | None, namespace: str) -> NamespaceListing:
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


def _as_read(acta: list[Actum], query: ActaQuery) -> list[Actum]:
    """The acta as a read hands them back: with ``raw_data``, data as its JSON text."""
    if not query.raw_data:
        return acta
    return [
        a if a.data is None else dataclasses.replace(a, data=RawJSON(dumps_data(a.data)))
        for a in acta
    ]
