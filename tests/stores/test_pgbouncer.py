"""chronica behind PgBouncer in transaction mode, the usual way a Django fleet shares
PostgreSQL: a named part of the PostgreSQL suite (writes, windows, batches, lifecycle,
follow, an integration) runs again with every connection through a PgBouncer that the
tests start (``tests/pgbouncer.py``), and live follow's LISTEN connection past it
(``CHRONICA["LISTEN_DATABASE"]``). Any session state chronica left on a pooled
connection (a session advisory lock, a prepared statement, a ``SET``) would show
there: the pooler hands each transaction whichever server connection is free.

Skipped on SQLite, and (with the reason printed) where pgbouncer is not installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from ..pgbouncer import WHY_MISSING, binary, pgbouncer

ROOT = Path(__file__).resolve().parent.parent.parent

# DjangoStore's cases only ("not memory": the in-memory store has no connection).
SUBSET = [
    "tests/core/test_services.py",  # writes
    "tests/core/test_windows.py",  # windows
    "tests/core/test_batches.py",  # batches
    "tests/core/test_lifecycle.py",  # lifecycle
    "tests/follow/test_follow.py",  # follow
    "tests/follow/test_follow_shared.py",
    "tests/integrations/pydantic_ai/test_pydantic_ai.py",  # an integration
]

pytestmark = pytest.mark.once


@pytest.fixture(autouse=True)
def _postgresql_with_pgbouncer():
    if connection.vendor != "postgresql":
        pytest.skip("PgBouncer is PostgreSQL's pooler: this run is on SQLite")
    if binary() is None:
        pytest.skip(WHY_MISSING)


def test_the_named_subset_passes_through_pgbouncer_in_transaction_mode():
    import psycopg

    direct = os.environ.get("CHRONICA_TEST_PG_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    database = os.environ.get("CHRONICA_TEST_PG_DBNAME", "test_chronica") + "_pgbouncer"
    try:
        with pgbouncer(direct) as pooled:
            env = {
                **os.environ,
                "CHRONICA_TEST_DB": "postgres",
                "CHRONICA_TEST_PG_URL": pooled,
                "CHRONICA_TEST_PG_LISTEN_URL": direct,
                "CHRONICA_TEST_PG_DBNAME": database,
            }
            # --reuse-db: the database is dropped below, past the pooler, once
            # PgBouncer has closed its server connections to it.
            pytest_args = ["-q", "-p", "no:cacheprovider", "--reuse-db", "-k", "not memory"]
            run = subprocess.run(
                [sys.executable, "-m", "pytest", *pytest_args, *SUBSET],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
    finally:
        with psycopg.connect(direct, autocommit=True) as server:
            server.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    tail = "\n".join((run.stdout + run.stderr).splitlines()[-40:])
    assert run.returncode == 0, tail
