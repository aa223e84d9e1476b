"""The dialect of a connection: the one place that asks ``connection.vendor``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.db.backends.base.base import BaseDatabaseWrapper

from .base import BaseDialect
from .postgresql import PostgreSQLDialect
from .sqlite import SQLiteDialect

__all__ = ["DIALECTS", "dialect_of", "matching", "retry_when_locked"]

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


def matching(connection: BaseDatabaseWrapper, text: str) -> tuple[str, list[Any]] | None:
    """A subquery of the ``seq`` of every actum (of any owner) that matches the search
    query ``text``, for the admin's search box; ``None`` where the database has no
    search or the query has no word to find."""
    from ...conf import chronica_settings
    from ...search import parse_query

    dialect = dialect_of(connection)
    try:
        query = parse_query(text)
    except ValueError:
        return None
    if not dialect.searches:
        return None
    return dialect.matching(chronica_settings.SEARCH_CONFIG, query)
