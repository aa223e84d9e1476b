"""``DjangoStore``: chronica on any Django database (PostgreSQL and SQLite are tested).

Every read is one SQL statement. On PostgreSQL a write, a batch included, is one
statement too; other databases write inside a transaction that starts with a
write, so SQLite writers queue on the busy timeout instead of failing with
"database is locked". Values are always passed as parameters, never formatted
into SQL.

Every write takes the chronicum's row lock before its acta get their ``seq``, and
holds it until it commits: within a chronicum, acta become visible in ``seq``
order, and a delete or a pop never races an insert.

Laid out like Django's database backends: ``base`` holds the plain dialect (the SQL,
from named templates) and ``sqlite`` and ``postgresql`` what their vendors do
otherwise; ``dialects`` picks one for a connection; ``plans`` holds the statements
of each store call; ``store`` the ``DjangoStore`` that runs them; ``functions_0004``
the PL/pgSQL functions as migration 0004 creates them, frozen.
"""

from .dialects import retry_when_locked
from .postgresql import forget_functions
from .store import DjangoStore

__all__ = ["DjangoStore", "forget_functions", "retry_when_locked"]
