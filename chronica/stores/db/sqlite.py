"""SQLite's dialect: the plain SQL, with ``ON CONFLICT`` and a writer that waits its turn.

SQLite has one write lock for the whole database. Every write of chronica's starts
its transaction with a write, so it takes that lock before it reads: concurrent
writers queue on the busy timeout instead of deadlocking, with Django's default
options (no special ``transaction_mode``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django.db import OperationalError
from django.db.backends.base.base import BaseDatabaseWrapper

from ...values import ActaQuery
from .base import BaseDialect, Where

__all__ = ["SQLITE_LOCK_ATTEMPTS", "SQLiteDialect"]

_T = TypeVar("_T")

SQLITE_LOCK_ATTEMPTS = 6


class SQLiteDialect(BaseDialect):
    has_on_conflict = True

    def window_conditions(
        self,
        chronicum_id: str,
        query: ActaQuery,
        owner_id: str | None,
        *,
        with_owner: bool = True,
        functions: bool = False,
    ) -> Where:
        """The plain conditions, and with ``before`` an equality on the chronicum too:
        with the range alone SQLite seeks on ``chronicum_id`` only and walks every newer
        actum to the ``seq`` bound, so paging back cost grew with the session (373 ms for
        ``before=#1000`` of 20,000); with it the (chronicum_id, seq) index seeks to both
        (``SEARCH ... (chronicum_id=? AND seq<?)``, which a test reads)."""
        where = super().window_conditions(
            chronicum_id, query, owner_id, with_owner=with_owner, functions=functions
        )
        if query.before is None:
            return where
        return Where(f"chronicum_id = %s AND {where.sql}", [chronicum_id, *where.params])

    def retry_when_locked(self, connection: BaseDatabaseWrapper, write: Callable[[], _T]) -> _T:
        """Run ``write`` (a whole transaction of ours) again when SQLite gave up waiting
        for its write lock.

        A SQLite writer waits its turn on the busy timeout (5 s with Django's defaults);
        many writers on a loaded machine can wait longer. A transaction of our own can
        simply be tried again; inside a caller's transaction the error goes to the caller.
        """
        for attempt in range(SQLITE_LOCK_ATTEMPTS):
            try:
                return write()
            except OperationalError as exc:
                if (
                    connection.in_atomic_block
                    or "locked" not in str(exc)
                    or attempt == SQLITE_LOCK_ATTEMPTS - 1
                ):
                    raise
        raise AssertionError("unreachable")
