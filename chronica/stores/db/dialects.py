"""The dialect of a connection: the one place that asks ``connection.vendor``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django.db.backends.base.base import BaseDatabaseWrapper

from .base import BaseDialect
from .postgresql import PostgreSQLDialect
from .sqlite import SQLiteDialect

__all__ = ["DIALECTS", "dialect_of", "retry_when_locked"]

_T = TypeVar("_T")

PLAIN = BaseDialect()
DIALECTS: dict[str, BaseDialect] = {
    "postgresql": PostgreSQLDialect(),
    "sqlite": SQLiteDialect(),
}
"""A dialect by Django's ``vendor``; any other database gets the plain one."""


def dialect_of(connection: BaseDatabaseWrapper) -> BaseDialect:
    return DIALECTS.get(connection.vendor, PLAIN)


def retry_when_locked(connection: BaseDatabaseWrapper, write: Callable[[], _T]) -> _T:
    """Run ``write``, a whole transaction of the caller's own, on ``connection``; on
    SQLite, again when it gave up waiting for the write lock (inside a transaction
    that is not ``write``'s own, the error goes to the caller)."""
    return dialect_of(connection).retry_when_locked(connection, write)
