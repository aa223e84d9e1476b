"""A burst against example_project under uvicorn (one worker): 300 streams opened at once
all get their stream, through a queue of ``DJANGO_CONCURRENCY`` requests, with a few
threads and a few database connections, not one of each per request (before: 1,007
threads, every connection the database had, and 503s)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connection

from tests.exampleproject import PYTHON, environment, free_port, serving

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

STREAMS = 300
CONCURRENCY = 8


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[int, int]]:
    """(port, server process ID)."""
    port = free_port()
    command = [
        *(PYTHON, "-m", "uvicorn", "example_project.asgi:application"),
        *("--host", "127.0.0.1", "--port", str(port), "--no-proxy-headers"),
    ]
    env = environment(DJANGO_CONCURRENCY=str(CONCURRENCY), DJANGO_THROTTLE_USER="100000/minute")
    log = tmp_path / "uvicorn.log"
    with serving(command, port, log, env=env, ready="/static/admin/css/base.css"):
        pid = int(
            next(line for line in log.read_text().splitlines() if "Started server process" in line)
            .split("[")[-1]
            .rstrip("]")
        )
        yield port, pid


def threads_of(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return int(next(line for line in status if line.startswith("Threads")).split()[1])


def connections_to_the_test_database(probe) -> int:
    return probe.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
        " AND pid <> pg_backend_pid()"
    ).fetchone()[0]


async def open_streams(port: int, token: str) -> list[int]:
    writers = []

    async def one() -> int:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writers.append(writer)
        writer.write(
            b"GET /api/chronica/dinner-friday/acta/stream/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Authorization: Token " + token.encode() + b"\r\nAccept: text/event-stream\r\n\r\n"
        )
        await writer.drain()
        status_line = await asyncio.wait_for(reader.readline(), 120)
        return int(status_line.split()[1])

    try:
        return list(await asyncio.gather(*(one() for _ in range(STREAMS))))
    finally:
        for writer in writers:
            writer.close()


def test_a_burst_of_streams_waits_its_turn(served, ardian):
    from rest_framework.authtoken.models import Token

    from chronica import Actum, services

    port, pid = served
    token = Token.objects.create(user=ardian).key
    services.record_actum(
        services.owner_id_for(ardian),
        Actum(
            chronicum_id="dinner-friday",
            kind="message",
            actor_kind="human",
            actor="ardian",
            content="Friday?",
        ),
    )
    peak = {"threads": 0, "connections": 0}
    done = threading.Event()
    postgres = connection.vendor == "postgresql"

    def watch() -> None:
        probe = None
        if postgres:
            from tests.database import server_connection

            probe = server_connection()
        try:
            while not done.is_set():
                peak["threads"] = max(peak["threads"], threads_of(pid))
                if probe is not None:
                    peak["connections"] = max(
                        peak["connections"], connections_to_the_test_database(probe)
                    )
                time.sleep(0.02)
        finally:
            if probe is not None:
                probe.close()

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        statuses = asyncio.run(open_streams(port, token))
    finally:
        done.set()
        watcher.join()

    assert statuses == [200] * STREAMS
    # The queue's threads, the guard's, uvicorn's and asgiref's: not one per stream.
    assert peak["threads"] < 60, peak
    if postgres:
        # The queue's, the streams' reads (asgiref's executor threads, one connection
        # each; 10 to spare), the LISTEN connection, and the test's own (the watcher
        # excluded).
        assert peak["connections"] <= CONCURRENCY + 10 + 1 + 2, peak
