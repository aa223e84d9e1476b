"""The benchmark database: created if missing, migrated by Django, filled with generate_series.

Filler never goes through chronica's API: a million acta through ``record_actum``
would take most of the run, and the point is to read them, not to write them.
"""

from __future__ import annotations

import os
import platform
from typing import Any

import psycopg
from django.conf import settings
from django.core.management import call_command
from psycopg import sql

from chronica import ActorKind, Actum, ActumKind

OWNER = "ardian"
"""Every benchmark chronicum with acta belongs to ardian, as in the dinner-friday scenario."""


def human_message(chronicum_id: str, n: int) -> Actum:
    """The person's n-th message in a benchmark chronicum."""
    return Actum(
        chronicum_id=chronicum_id,
        kind=ActumKind.MESSAGE,
        actor_kind=ActorKind.HUMAN,
        actor=OWNER,
        content=f"table for four at eight? ({n})",
    )


LISTED = {"rafa": 10_000, "sam": 10}
"""Owners of the listing case and their number of chronica, among LISTING_TOTAL."""
LISTING_TOTAL = 1_000_000

# One actum in four is a message, so a window of 20 messages reads about 80 rows.
# Tool requests and responses share a call_id. Two acta in three carry the token count
# chronica's default counter would have stored; every third has none (NULL), like a row
# from a writer that knows only the original columns, which a budget estimates in SQL.
_FILL = """
INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at, call_id, tokens)
SELECT md5(%(id)s || g::text), %(id)s,
       (ARRAY['message', 'thought', 'tool_request', 'tool_response'])[1 + g %% 4],
       (ARRAY['human', 'agent', 'agent', 'system'])[1 + g %% 4],
       (ARRAY['ardian', 'booking', 'booking', 'planner'])[1 + g %% 4],
       content,
       timestamptz '2025-01-01 00:00:00+00' + g * interval '1 second',
       CASE WHEN g %% 4 >= 2 THEN 'call-' || (g / 4) ELSE '' END,
       CASE WHEN g %% 3 = 0 THEN NULL ELSE 4 + (2 * octet_length(content) + 6) / 7 END
FROM (
    SELECT g, 'dinner on friday, turn ' || g || ': ' || repeat('table for four at eight? ', 8)
    FROM generate_series(1, %(n)s) AS g
) AS s(g, content)
"""

# A million chronica: rafa's 10,000, sam's 10, and the rest spread over 50,000 other
# owners (about 20 each). Activity times are scattered, so an owner's chronica are not
# next to each other in the table.
_LISTING = """
INSERT INTO chronica (id, owner_id, started_at, last_activity_at)
SELECT 'listed-' || g,
       CASE WHEN g <= %(big)s THEN %(big_owner)s
            WHEN g <= %(big)s + %(small)s THEN %(small_owner)s
            ELSE 'owner-' || (g %% 50000) END,
       t - interval '1 hour', t
FROM generate_series(1, %(total)s) AS g,
     LATERAL (SELECT timestamptz '2025-01-01 00:00:00+00'
                     + ((g::bigint * 7919) %% 1000003) * interval '1 second') AS s(t)
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


def add_chronicum(conn: psycopg.Connection[Any], chronicum_id: str, n: int) -> None:
    """Create ardian's chronicum ``chronicum_id`` with ``n`` filler acta."""
    conn.execute(
        "INSERT INTO chronica (id, owner_id, started_at, last_activity_at)"
        " VALUES (%s, %s, now(), now())",
        [chronicum_id, OWNER],
    )
    if n:
        conn.execute(_FILL, {"id": chronicum_id, "n": n})


def load(sessions: dict[str, int]) -> None:
    """Empty both tables, create each chronicum with its number of filler acta, then
    the chronica of the listing case (LISTING_TOTAL chronica in all)."""
    with psycopg.connect(conninfo(), autocommit=True) as conn:
        conn.execute("TRUNCATE acta, chronica RESTART IDENTITY")
        for chronicum_id, n in sessions.items():
            add_chronicum(conn, chronicum_id, n)
        (big_owner, big), (small_owner, small) = LISTED.items()
        conn.execute(
            _LISTING,
            {
                "big": big,
                "big_owner": big_owner,
                "small": small,
                "small_owner": small_owner,
                "total": LISTING_TOTAL - len(sessions),
            },
        )
        conn.execute("VACUUM ANALYZE acta")
        conn.execute("VACUUM ANALYZE chronica")


def server_version() -> str:
    """The PostgreSQL server's version string, for the report."""
    with psycopg.connect(conninfo(), autocommit=True) as conn:
        row = conn.execute("SHOW server_version").fetchone()
    return str(row[0]) if row else "?"


def sqlalchemy_url() -> str:
    """The benchmark database as SQLAlchemy names it (the baselines of cases 11 and 15)."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgresql+psycopg://{auth}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"


def machine() -> str:
    """One line naming the machine the figures came from."""
    import django
    import psycopg
    from django.conf import settings

    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next(line.split(":", 1)[1].strip() for line in info if "model name" in line)
    except (OSError, StopIteration):
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    db = settings.DATABASES["default"]
    if getattr(settings, "BENCH_DB", "postgres") == "sqlite":
        import sqlite3

        database = f"SQLite {sqlite3.sqlite_version} ({db['NAME']})"
    else:
        database = f"PostgreSQL {server_version()} on {db['HOST']}:{db['PORT']}"
    try:
        load = "load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
    except OSError:
        load = "load average ?"
    return (
        f"{cpu}, {os.cpu_count()} CPUs, {mem:.0f} GiB, {load}; {database};"
        f" Python {platform.python_version()}, Django {django.__version__},"
        f" psycopg {psycopg.__version__} ({psycopg.pq.__impl__})"
    )
