"""``DjangoStore``: chronica on any Django database (PostgreSQL and SQLite are tested).

A window, a listing and ``get`` are one SQL statement each. On PostgreSQL a write, a
batch and a first write included, is one statement too; SQLite writes in one short
transaction that starts with a write, so that its writers queue on the busy timeout
instead of failing with "database is locked". Values are always passed as parameters,
never formatted into SQL.

Every write takes the chronicum's row lock before its acta get their ``seq``, and
holds it until it commits: within a chronicum, acta become visible in ``seq`` order,
and a delete or a pop never races an insert.

Laid out like Django's database backends: ``sql`` holds the statements as templates,
``base`` the plain dialect that formats them, ``sqlite`` and ``postgresql`` what their
vendors do otherwise; ``dialects`` picks one for a connection; ``store`` is the
``DjangoStore`` that runs them, ``state`` its state documents.
"""

from .dialects import retry_when_locked
from .store import DjangoStore

__all__ = ["DjangoStore", "retry_when_locked"]
