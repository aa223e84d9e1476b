"""The benchmark database: created if missing, migrated by Django, filled with generate_series.

Filler never goes through chronica's API: a million acta through ``record_actum``
would take most of the run, and the point is to read them, not to write them.
"""

from __future__ import annotations

import psycopg
from django.conf import settings
from django.core.management import call_command
from psycopg import sql

OWNER = "ardian"
"""Every benchmark chronicum belongs to ardian, as in the dinner-friday scenario."""

# One actum in four is a message, so a window of 20 messages reads about 80 rows.
_FILL = """
INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at)
SELECT md5(%(id)s || g::text), %(id)s,
       (ARRAY['message', 'thought', 'tool_request', 'tool_response'])[1 + g %% 4],
       (ARRAY['human', 'agent', 'agent', 'system'])[1 + g %% 4],
       (ARRAY['ardian', 'booking', 'booking', 'planner'])[1 + g %% 4],
       'dinner on friday, turn ' || g || ': ' || repeat('table for four at eight? ', 8),
       timestamptz '2025-01-01 00:00:00+00' + g * interval '1 second'
FROM generate_series(1, %(n)s) AS g
"""


def conninfo(dbname: str | None = None) -> str:
    """The libpq connection string of the benchmark database (or of ``dbname`` on its server)."""
    db = settings.DATABASES["default"]
    return psycopg.conninfo.make_conninfo(
        dbname=dbname or db["NAME"],
        user=db["USER"],
        password=db["PASSWORD"] or None,
        host=db["HOST"],
        port=db["PORT"],
    )


def ensure_database() -> str:
    """Create the benchmark database if it is missing and migrate it; return its name."""
    name = str(settings.DATABASES["default"]["NAME"])
    if name.startswith("test_") or name in {"postgres", "template0", "template1"}:
        raise SystemExit(f"refusing to benchmark on {name!r}: use a database of its own")
    with psycopg.connect(conninfo("postgres"), autocommit=True) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if found is None:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    call_command("migrate", verbosity=0, interactive=False)
    return name


def load(sessions: dict[str, int]) -> None:
    """Empty both tables, then create each chronicum with its number of filler acta."""
    with psycopg.connect(conninfo(), autocommit=True) as conn:
        conn.execute("TRUNCATE acta, chronica RESTART IDENTITY")
        for chronicum_id, n in sessions.items():
            conn.execute(
                "INSERT INTO chronica (id, owner_id, started_at, last_activity_at)"
                " VALUES (%s, %s, now(), now())",
                [chronicum_id, OWNER],
            )
            if n:
                conn.execute(_FILL, {"id": chronicum_id, "n": n})
        conn.execute("VACUUM ANALYZE acta")
        conn.execute("VACUUM ANALYZE chronica")


def server_version() -> str:
    """The PostgreSQL server's version string, for the report."""
    with psycopg.connect(conninfo(), autocommit=True) as conn:
        row = conn.execute("SHOW server_version").fetchone()
    return str(row[0]) if row else "?"
