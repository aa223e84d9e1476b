"""A store that keeps everything in this process: for tests and development.

Thread-safe: a lock per chronicum guards its acta and its idempotency keys.
Its keys grow without bound, and nothing survives the process.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import threading

from ..errors import ChronicumExists, ChronicumNotFound
from ..values import ActaQuery, Actum, Chronicum

__all__ = ["InMemoryStore"]


@dataclasses.dataclass
class _Entry:
    chronicum: Chronicum
    acta: list[Actum] = dataclasses.field(default_factory=list)
    keys: dict[str, Actum] = dataclasses.field(default_factory=dict)
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)


class InMemoryStore:
    """An ``IdempotentStore`` in a dict. Not shared between processes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}

    def _entry(self, chronicum_id: str) -> _Entry:
        try:
            return self._entries[chronicum_id]
        except KeyError:
            raise ChronicumNotFound(chronicum_id) from None

    def create(self, chronicum: Chronicum) -> None:
        with self._lock:
            if chronicum.id in self._entries:
                raise ChronicumExists(chronicum.id)
            self._entries[chronicum.id] = _Entry(chronicum)

    def get(self, chronicum_id: str) -> Chronicum:
        return self._entry(chronicum_id).chronicum

    def record(self, actum: Actum) -> Actum:
        entry = self._entry(actum.chronicum_id)
        with entry.lock:
            return self._append(entry, actum)

    def record_idempotent(self, actum: Actum, key: str) -> Actum:
        entry = self._entry(actum.chronicum_id)
        with entry.lock:
            stored = entry.keys.get(key)
            if stored is None:
                stored = entry.keys[key] = self._append(entry, actum)
            return stored

    def acta(self, chronicum_id: str, query: ActaQuery) -> list[Actum]:
        entry = self._entry(chronicum_id)
        with entry.lock:
            acta = list(entry.acta)
        if query.kinds:
            acta = [a for a in acta if a.kind in query.kinds]
        if query.actor_kinds:
            acta = [a for a in acta if a.actor_kind in query.actor_kinds]
        if query.last_n > 0:
            acta = acta[-query.last_n :]
        return acta

    @staticmethod
    def _append(entry: _Entry, actum: Actum) -> Actum:
        at = dt.datetime.now(dt.UTC)
        stored = dataclasses.replace(actum, at=at)
        entry.acta.append(stored)
        entry.chronicum = dataclasses.replace(entry.chronicum, last_activity_at=at)
        return stored

    def __repr__(self) -> str:
        return f"<InMemoryStore chronica={len(self._entries)}>"
