"""Connections of the tests' own to the test database, outside chronica and Django."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection


def framework_suite_on(database: str) -> pytest.MarkDecorator:
    """A framework's own suite (LangGraph's graph tests, the OpenAI Agents SDK's) runs once
    a build, on one database: each costs minutes of processor, and what it checks, the
    framework's behaviour on chronica's saver or session, is the same on either. Each goes
    to a database of its own, so that the two once legs (scripts/ci.py) end together.
    What the database does for the integration is tested on both, in every leg (LangGraph's
    checkpoint conformance suite, the integrations' own tests)."""
    names = {"sqlite": "SQLite", "postgres": "PostgreSQL"}
    (other,) = set(names) - {database}
    return pytest.mark.skipif(
        os.environ.get("CHRONICA_TEST_DB", "sqlite") != database,
        reason=f"a framework's own suite runs once a build, on {names[database]}"
        f" (newest-{database}-once); the integration's database part is tested on"
        f" {names[other]} in every leg (tests/database.py)",
    )


def server_connection(**options: Any) -> Any:
    """A second, separate PostgreSQL connection to the test database: never the one
    under test (psycopg is imported here, so SQLite runs never need it)."""
    import psycopg

    s = connection.settings_dict
    return psycopg.connect(
        host=s["HOST"],
        port=s["PORT"],
        user=s["USER"],
        password=s["PASSWORD"] or None,
        dbname=s["NAME"],
        autocommit=True,
        **options,
    )


def backend_pids(application_name: str) -> list[int]:
    """The PIDs of the test database's backends whose client set ``application_name``."""
    with server_connection() as probe:
        rows = probe.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
            " AND application_name = %s",
            [application_name],
        ).fetchall()
    return [row[0] for row in rows]


@contextlib.contextmanager
def silent_server() -> Iterator[int]:
    """A port that accepts connections and never says a word (a database that hangs
    before its greeting)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                accepted.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for sock in accepted:
            sock.close()
        listener.close()
