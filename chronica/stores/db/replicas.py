"""Reads from PostgreSQL replicas that never read older than this process's writes.

``CHRONICA["READ_DATABASES"]`` names Django database aliases (streaming replicas of
the database chronica writes to) that windows, listings and ``get_chronicum`` may
read from. Everything else, writes, pops, deletes, follow reads, stays on the
primary (the alias the routers choose for writing).

Read-your-writes: after each write commits, the primary's WAL position
(``pg_current_wal_lsn()``, at or past the write's commit record) is remembered for
this process; a read goes to a replica only once that replica has replayed that far
(``pg_last_wal_replay_lsn()``), checked in the read's own round of statements and
waited for at most ``WAIT`` seconds, and to the primary otherwise. The position is
the process's newest write, so every request, task and thread of the process reads
at least what any of them wrote. A replica that cannot be reached is skipped.
"""

from __future__ import annotations

import contextvars
import itertools
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from django.core.signals import setting_changed
from django.db import DatabaseError, connections

from .base import Plan, run_plan

__all__ = ["WAIT", "ReadRouter", "lsn_after_write", "read_aliases", "stats"]

WAIT = 0.05
"""Seconds a read waits for a replica to replay this process's newest write, before
it reads from the primary instead."""
_POLL = 0.005

CURRENT_LSN = "SELECT pg_current_wal_lsn()::text"
REPLAYED = "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn"

_lock = threading.Lock()
_written: dict[str, str] = {}
"""By primary alias: the WAL position of this process's newest committed write."""
_replayed: dict[str, str] = {}
"""By replica alias: the newest position it was seen to have replayed."""
_counter = itertools.count()
missing: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "chronica_missing", default=None
)
"""The chronicum the last write of this context found missing (or not the owner's):
its reads go to the primary until a write into it succeeds, since the caller
creates it next and must not be told by a lagging replica that it is still missing."""
stats: dict[str, int] = {"replica": 0, "primary": 0}
"""Reads served by a replica and by the primary (reads eligible for a replica only)."""


def _lsn(text: str) -> int:
    high, low = text.split("/")
    return (int(high, 16) << 32) | int(low, 16)


_aliases: tuple[str, ...] | None = None


def read_aliases() -> Sequence[str]:
    """``CHRONICA["READ_DATABASES"]``, read once (every window asks) and again after
    ``setting_changed`` (``override_settings``)."""
    global _aliases
    aliases = _aliases
    if aliases is None:
        from ...conf import chronica_settings

        aliases = _aliases = chronica_settings.READ_DATABASES
    return aliases


def _on_setting_changed(*, setting: str, **kwargs: Any) -> None:
    global _aliases
    if setting == "CHRONICA":
        _aliases = None


setting_changed.connect(_on_setting_changed, dispatch_uid="chronica.stores.db.replicas")


def remember(primary: str, lsn: str | None) -> None:
    if lsn is None:
        return
    with _lock:
        known = _written.get(primary)
        if known is None or _lsn(lsn) > _lsn(known):
            _written[primary] = lsn


def lsn_plan() -> Plan[str | None]:
    rows = yield CURRENT_LSN, []
    return rows[0][0] if rows else None


def lsn_after_write(primary: str) -> Callable[[], None] | None:
    """What to run once a write on ``primary`` has committed (``None`` when no replica
    is configured): remember the position replicas must reach to show it."""
    if not read_aliases():
        return None

    def after() -> None:
        connection = connections[primary]
        if connection.vendor != "postgresql":
            return
        with connection.cursor() as cursor:
            remember(primary, run_plan(cursor, lsn_plan()))

    return after


def _caught_up(replica: str, need: str | None) -> Plan[bool]:
    if need is None:
        return True
    seen = _replayed.get(replica)
    if seen is not None and _lsn(seen) >= _lsn(need):
        return True
    rows = yield REPLAYED, [need]
    if rows and rows[0][0]:
        with _lock:
            _replayed[replica] = need
        return True
    return False


class ReadRouter:
    """Which alias a read of ``primary`` goes to."""

    def __init__(self, primary: str) -> None:
        self.primary = primary

    def _candidates(self) -> list[str]:
        replicas = [alias for alias in read_aliases() if alias != self.primary]
        if not replicas:
            return []
        if connections[self.primary].in_atomic_block:
            return []  # the caller's transaction may hold writes of its own
        start = next(_counter) % len(replicas)
        return replicas[start:] + replicas[:start]

    def choose(self) -> str:
        candidates = self._candidates()
        if not candidates:
            return self.primary
        need = _written.get(self.primary)
        deadline = time.monotonic() + WAIT
        while True:
            for replica in candidates:
                try:
                    with connections[replica].cursor() as cursor:
                        if run_plan(cursor, _caught_up(replica, need)):
                            stats["replica"] += 1
                            return replica
                except DatabaseError:
                    connections[replica].close()
                    candidates = [c for c in candidates if c != replica]
            if not candidates or time.monotonic() >= deadline:
                stats["primary"] += 1
                return self.primary
            time.sleep(_POLL)

    async def achoose(self, run: Callable[[str, Plan[Any]], Any]) -> str:
        import asyncio

        candidates = self._candidates()
        if not candidates:
            return self.primary
        need = _written.get(self.primary)
        deadline = time.monotonic() + WAIT
        while True:
            for replica in candidates:
                try:
                    if await run(replica, _caught_up(replica, need)):
                        stats["replica"] += 1
                        return replica
                except DatabaseError:
                    candidates = [c for c in candidates if c != replica]
            if not candidates or time.monotonic() >= deadline:
                stats["primary"] += 1
                return self.primary
            await asyncio.sleep(_POLL)
