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

import itertools
import threading
import time
from collections.abc import Sequence

from django.db import DatabaseError, connections, transaction

from ...conf import chronica_settings
from .dialects import dialect_of

__all__ = ["WAIT", "choose", "read_aliases", "stats", "written"]

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
stats: dict[str, int] = {"replica": 0, "primary": 0}
"""Reads served by a replica and by the primary (reads eligible for a replica only),
counted under the module's lock."""


def _lsn(text: str) -> int:
    high, low = text.split("/")
    return (int(high, 16) << 32) | int(low, 16)


def read_aliases() -> Sequence[str]:
    """``CHRONICA["READ_DATABASES"]``, which ``chronica_settings`` keeps until a setting
    changes (every read asks)."""
    return chronica_settings.READ_DATABASES


def _remember(primary: str, lsn: str | None) -> None:
    if lsn is None:
        return
    with _lock:
        known = _written.get(primary)
        if known is None or _lsn(lsn) > _lsn(known):
            _written[primary] = lsn


def written(primary: str) -> None:
    """After a write on ``primary``: once it commits, remember the WAL position replicas
    must reach to show it (only where ``CHRONICA["READ_DATABASES"]`` names replicas)."""
    if not read_aliases():
        return

    def after() -> None:
        connection = connections[primary]
        if not dialect_of(connection).features.replicas:
            return
        with connection.cursor() as cursor:
            cursor.execute(CURRENT_LSN)
            row = cursor.fetchone()
        _remember(primary, row[0] if row else None)

    transaction.on_commit(after, using=primary)


def _count(served: str) -> None:
    with _lock:
        stats[served] += 1


def _caught_up(replica: str, need: str | None) -> bool:
    if need is None:
        return True
    seen = _replayed.get(replica)
    if seen is not None and _lsn(seen) >= _lsn(need):
        return True
    with connections[replica].cursor() as cursor:
        cursor.execute(REPLAYED, [need])
        row = cursor.fetchone()
    if row and row[0]:
        with _lock:
            _replayed[replica] = need
        return True
    return False


def choose(primary: str) -> str:
    """The alias a read of ``primary`` goes to: a replica that has replayed this
    process's newest write (waiting up to ``WAIT`` for one), else ``primary``. Inside
    a transaction of the caller's, always ``primary``: it may hold writes of its own."""
    replicas = [alias for alias in read_aliases() if alias != primary]
    if not replicas or connections[primary].in_atomic_block:
        return primary
    start = next(_counter) % len(replicas)
    candidates = replicas[start:] + replicas[:start]
    need = _written.get(primary)
    deadline = time.monotonic() + WAIT
    while True:
        for replica in list(candidates):
            try:
                if _caught_up(replica, need):
                    _count("replica")
                    return replica
            except DatabaseError:
                connections[replica].close()
                candidates.remove(replica)
        if not candidates or time.monotonic() >= deadline:
            _count("primary")
            return primary
        time.sleep(_POLL)
