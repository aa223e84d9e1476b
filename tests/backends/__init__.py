"""Django's SQLite and PostgreSQL backends for the test suite, but for the flush that
empties the database after each transactional test (``TransactionTestCase``, pytest-
django's ``transactional_db``; about 870 a leg): it keeps ``django_content_type`` and
``auth_permission``.

Django's flush empties them too, then its ``post_migrate`` signal makes every content
type and permission again, the same rows: 52 ms of a 55 ms flush on SQLite (measured,
stop 47; 20 ms a flush with them kept, the signal finding them there). A test that needs
another content type or permission still makes it, and nothing here deletes one; a flush
that asks for ``reset_sequences`` or ``allow_cascade`` empties every table, as Django's.

Subclassing a built-in backend is Django's documented way to change one behaviour
(docs/ref/databases, "Subclassing the built-in database backends").
"""

from __future__ import annotations

from typing import Any

#: The tables Django's post_migrate fills again after every flush, with the same rows.
KEPT = frozenset({"django_content_type", "auth_permission"})


class KeepingFlush:
    """A backend's ``DatabaseOperations``, whose flush leaves :data:`KEPT` as it is."""

    def sql_flush(
        self,
        style: Any,
        tables: Any,
        *,
        reset_sequences: bool = False,
        allow_cascade: bool = False,
    ) -> list[str]:
        if not (reset_sequences or allow_cascade):
            tables = [table for table in tables if table not in KEPT]
        flush: list[str] = super().sql_flush(  # type: ignore[misc]
            style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
        )
        return flush
