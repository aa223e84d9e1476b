"""A connection the streams' reads go through is killed (a backend terminated, as a
failover or an operator does): every stream sharing it keeps its place and goes on,
reading again on a fresh connection; none ends, none skips an actum."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from asgiref.sync import sync_to_async
from django.db import connection, connections

from chronica import services

from .. import scenario
from .test_follow_stream import STREAM, basic, fast_polls, opened, owner, server, wire

__all__ = ["fast_polls", "server"]  # fixtures

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.urls("tests.follow_urls")]

STREAMS = 12


READS = "reads"
"""Not an application name: the connections the followers read through, Django's own
(every backend of the test database but the listener, this test's and the killer's)."""


@pytest.fixture(autouse=True)
def no_killed_connection_left():
    """What these tests kill includes the Django connection of asgiref's shared thread,
    where every ``asyncio.run``'s thread-sensitive ``sync_to_async`` runs, test after
    test (``chronica_follow``'s reads do): closed after each test, so that a later
    test's first statement there does not meet a killed backend (it did, once, in
    stop 47's rehearsal: ``AdminShutdown`` in tests/commands/test_actor_flag.py)."""
    yield
    asyncio.run(sync_to_async(connections.close_all, thread_sensitive=True)())


def my_backend() -> int:
    connection.ensure_connection()
    return connection.connection.info.backend_pid


def terminate(application_names: tuple[str, ...], mine: int | None = None) -> int:
    from ..database import server_connection

    reads = READS in application_names
    names = [name for name in application_names if name != READS]
    mine = my_backend() if mine is None else mine
    with server_connection() as admin:
        return len(
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid NOT IN (pg_backend_pid(), %s)"
                " AND (application_name = ANY(%s)"
                "      OR (%s AND application_name <> 'chronica listener'))",
                [mine, names, reads],
            ).fetchall()
        )


@pytest.mark.parametrize(
    "killed",
    [(READS,), ("chronica listener",), (READS, "chronica listener")],
    ids=["reads", "listen", "both"],
)
def test_streams_outlive_a_killed_connection(server, ardian, killed):
    if connection.vendor != "postgresql":
        pytest.skip("backends terminated with pg_terminate_backend: this run is on SQLite")
    first = services.record_actum(owner(ardian), scenario.acta()[0])
    streams = [
        opened(server, f"{STREAM}?after={first.id}", **basic("ardian")) for _ in range(STREAMS)
    ]
    try:
        before = services.record_acta(owner(ardian), scenario.acta()[1:3])
        for stream in streams:
            assert stream.acta(2) == wire(before)  # reading, through the connections to kill
        assert terminate(killed) > 0
        # Writes land while the followers find out, and after.
        after = []
        for actum in scenario.acta()[3:]:
            after.append(services.record_actum(owner(ardian), actum))
            time.sleep(0.05)
        for stream in streams:
            assert stream.acta(len(after)) == wire(after)
    finally:
        for stream in streams:
            stream.close()


def test_a_follower_reads_again_while_the_database_is_away(server, ardian, monkeypatch):
    """Reads keep failing for a while (each new connection killed too): the follower
    keeps trying, then goes on where it was."""
    if connection.vendor != "postgresql":
        pytest.skip("backends terminated with pg_terminate_backend: this run is on SQLite")
    first = services.record_actum(owner(ardian), scenario.acta()[0])
    stream = opened(server, f"{STREAM}?after={first.id}", **basic("ardian"))
    stop = threading.Event()
    mine = my_backend()

    def keep_killing() -> None:
        while not stop.is_set():
            terminate((READS,), mine)
            time.sleep(0.02)

    killer = threading.Thread(target=keep_killing)
    try:
        killer.start()
        written = services.record_acta(owner(ardian), scenario.acta()[1:4])
        time.sleep(1)
        stop.set()
        killer.join()
        assert stream.acta(3) == wire(written)
    finally:
        stop.set()
        stream.close()
