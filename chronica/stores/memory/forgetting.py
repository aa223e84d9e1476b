"""The in-memory store's forgetting: redaction, erasure of an owner, retention."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
from collections.abc import Callable, Mapping

from ...values import Actum, Erasure, Redaction, StateScope
from .entry import MemoryBase

__all__ = ["ForgettingMixin"]


class ForgettingMixin(MemoryBase):
    def redact(
        self, owner_id: str, chronicum_id: str, actum_id: str, *, reason: str, at: dt.datetime
    ) -> Actum | None:
        entry = self._locked(owner_id, chronicum_id)
        if entry is None:
            return None
        try:
            for i, actum in enumerate(entry.acta):
                if actum.id == actum_id:
                    entry.acta[i] = actum = _redacted(actum, Redaction(at, reason))
                    entry.tokens[actum.id] = 0
                    return actum
            return None
        finally:
            entry.lock.release()

    def redactions(
        self, owner_id: str, chronicum_id: str, since: dt.datetime, position: int
    ) -> list[Actum]:
        entry = self._locked(owner_id, chronicum_id)
        if entry is None:
            return []
        try:
            pairs = list(zip(entry.acta, entry.positions, strict=True))
        finally:
            entry.lock.release()
        return [a for a, p in pairs if p <= position and a.redacted and a.redacted.at >= since]

    def erase(
        self,
        owner_id: str,
        *,
        reason: str,
        dry_run: bool = False,
        before_commit: Callable[[bool], Mapping[str, int]] | None = None,
    ) -> Erasure:
        counts = {"chronica": 0, "acta": 0, "states": 0}
        with self._lock:
            mine = [e for e in self._entries.values() if e.chronicum.owner_id == owner_id]
            for entry in mine:
                with entry.lock:
                    counts["chronica"] += 1
                    counts["acta"] += len(entry.acta)
                    if not dry_run:
                        del self._entries[entry.chronicum.id]
            with self._shared_lock:
                owned = [k for k in self._shared if k[0] is StateScope.OWNER and k[2] == owner_id]
                counts["states"] = len(owned)
                if not dry_run:
                    for key in owned:
                        del self._shared[key]
            if before_commit is not None:
                for table, count in before_commit(dry_run).items():
                    counts[table] = counts.get(table, 0) + count
        erasure = Erasure(
            hashlib.sha256(owner_id.encode()).hexdigest(), dt.datetime.now(dt.UTC), reason, counts
        )
        if not dry_run:
            self.erasures.append(erasure)
        return erasure

    def expire(
        self,
        action: str,
        cutoff: dt.datetime,
        kinds: frozenset[str],
        *,
        reason: str,
        dry_run: bool = False,
    ) -> dict[str, int]:
        now = dt.datetime.now(dt.UTC)
        done = {"acta": 0} if action == "redact" else {"chronica": 0, "acta": 0}
        with self._lock:
            entries = list(self._entries.values())
        for entry in entries:
            if action == "delete":
                # (the order of the locks as delete takes them)
                with self._lock, entry.lock:
                    gone = self._entries.get(entry.chronicum.id) is not entry
                    if not gone and entry.chronicum.last_activity_at < cutoff:
                        done["chronica"] += 1
                        done["acta"] += len(entry.acta)
                        if not dry_run:
                            del self._entries[entry.chronicum.id]
                continue
            with entry.lock:
                if self._entries.get(entry.chronicum.id) is not entry:
                    continue
                for i, actum in enumerate(entry.acta):
                    old = actum.at is not None and actum.at < cutoff
                    if old and actum.redacted is None and (not kinds or actum.kind in kinds):
                        done["acta"] += 1
                        if not dry_run:
                            entry.acta[i] = _redacted(actum, Redaction(now, reason))
                            entry.tokens[actum.id] = 0
        return done


def _redacted(actum: Actum, redaction: Redaction) -> Actum:
    """The actum emptied, keeping a redaction it had."""
    return dataclasses.replace(actum, content="", data=None, redacted=actum.redacted or redaction)
