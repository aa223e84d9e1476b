"""15. Live follow at scale and behind PgBouncer (issue 22).

- **Through a pooler**: ``afollow`` latency (commit -> yield, eight followers, a write
  every 20 ms, as case 14) with every connection of the followers and the writer
  going straight to PostgreSQL, then through a PgBouncer in transaction mode started
  for the purpose (``tests/pgbouncer.py``) with ``CHRONICA["LISTEN_DATABASE"]``
  past it. Target: through the pooler within 2x of direct, p50 < 20 ms.
- **Many streams**: ``STREAMS`` SSE clients of one chronicum on one uvicorn worker, one
  write a second for ``SECONDS`` s: delivery p50/p99 (commit -> event), streams
  aborted, the worker's threads, the database's connections. Target: 0 aborted,
  threads not growing with streams.
- **Idle streams**: ``IDLE`` SSE clients, nothing written: the database's
  transactions a second (pg_stat_database). Target: a few.

``python -m benchmarks.follow_scale`` runs it alone; ``CHRONICA_BENCH_STREAMS``,
``CHRONICA_BENCH_SECONDS``, ``CHRONICA_BENCH_IDLE`` scale it down for a small machine.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from typing import TYPE_CHECKING

from .follow import (
    CHRONICUM,
    FOLLOWERS,
    OWNER,
    ROOT,
    afollowers_and_writer,
    follow_latencies,
    follow_message,
    start_server,
    start_writer,
    written_times,
)

if TYPE_CHECKING:
    from .report import Row

STREAMS = int(os.environ.get("CHRONICA_BENCH_STREAMS", "1000"))
SECONDS = int(os.environ.get("CHRONICA_BENCH_SECONDS", "30"))
IDLE = int(os.environ.get("CHRONICA_BENCH_IDLE", "300"))


def _percentiles(latencies: list[float]) -> tuple[float, float]:
    if len(latencies) < 2:
        return (latencies[0], latencies[0]) if latencies else (float("nan"), float("nan"))
    return statistics.median(latencies), statistics.quantiles(latencies, n=100)[98]


# -- through a pooler ----------------------------------------------------------------


def _latency_here() -> None:
    """(Its own process, on the settings' database): afollow p50/p99 as JSON."""
    from django.db import connections

    from chronica import services

    first = services.record_actum(OWNER, follow_message(-1))
    connections.close_all()
    seen, written = asyncio.run(afollowers_and_writer(first.id))
    print(json.dumps(_percentiles(follow_latencies(seen, written))), flush=True)


def _latency(env: dict[str, str]) -> tuple[float, float]:
    command = [sys.executable, "-m", "benchmarks.follow_scale", "--latency"]
    run = subprocess.run(
        command,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "benchmarks.settings", **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if run.returncode:
        raise SystemExit(f"the latency run failed: {run.stderr[-2000:]}")
    p50, p99 = json.loads(run.stdout.splitlines()[-1])
    return p50, p99


def pooler() -> list[Row]:
    from django.conf import settings

    from tests.pgbouncer import WHY_MISSING, binary, pgbouncer

    from .report import Row, met

    direct_url = settings.PG_URL  # type: ignore[misc]
    d50, d99 = _latency({})
    rows = [
        Row(
            "15 follow-scale",
            f"afollow direct, {FOLLOWERS} followers",
            f"p50 {d50:.1f} ms, p99 {d99:.1f} ms",
        )
    ]
    if binary() is None:
        rows.append(Row("15 follow-scale", "afollow through PgBouncer", f"skipped: {WHY_MISSING}"))
        return rows
    with pgbouncer(direct_url) as pooled:
        env = {"CHRONICA_BENCH_PG_URL": pooled, "CHRONICA_BENCH_PG_LISTEN_URL": direct_url}
        p50, p99 = _latency(env)
    ratio = p50 / d50
    rows.append(
        Row(
            "15 follow-scale",
            "afollow through PgBouncer (transaction mode), LISTEN_DATABASE direct",
            f"p50 {p50:.1f} ms, p99 {p99:.1f} ms",
            f"direct: p50 {d50:.1f} ms",
            f"{ratio:.2f}",
            "<= 2.0, p50 < 20 ms",
            met(ratio <= 2.0 and p50 < 20),
        )
    )
    return rows


# -- many streams ------------------------------------------------------------------


def _threads(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("Threads:"))


def _connections() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) - 1 FROM pg_stat_activity WHERE datname = current_database()"
        )
        return int(cursor.fetchone()[0])


def _transactions() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database"
            " WHERE datname = current_database()"
        )
        return int(cursor.fetchone()[0])


class _Client:
    def __init__(self) -> None:
        self.got: dict[str, float] = {}
        self.aborted = False
        self.task: asyncio.Task[None] | None = None


async def _stream(port: int, after: str, client: _Client, opened: asyncio.Event) -> None:
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        path = f"/chronica/{CHRONICUM}/acta/stream/?after={after}"
        writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        try:
            while True:
                line = await reader.readline()
                if not line:
                    client.aborted = True
                    return
                if line.startswith(b": chronica stream"):
                    opened.set()
                if line.startswith(b"id: "):
                    client.got[line[4:].strip().decode()] = time.perf_counter()
        finally:
            writer.close()
    except asyncio.CancelledError:
        raise
    except Exception:
        client.aborted = True


async def _open(port: int, after: str, n: int) -> list[_Client]:
    clients = []
    for i in range(n):
        client, opened = _Client(), asyncio.Event()
        client.task = asyncio.ensure_future(_stream(port, after, client, opened))
        clients.append(client)
        if i % 50 == 49:
            await asyncio.sleep(0.05)  # not all in one burst of the accept queue
    return clients


async def _close(clients: list[_Client]) -> None:
    for client in clients:
        assert client.task is not None
        client.task.cancel()
    await asyncio.gather(*(c.task for c in clients if c.task), return_exceptions=True)


def streams() -> list[Row]:
    from django.db import connections

    from chronica import services

    from .report import Row, met

    first = services.record_actum(OWNER, follow_message(-3))
    connections.close_all()
    server, port = start_server()
    rows = []
    try:

        async def run() -> tuple[list[_Client], dict[str, float], int, int, int]:
            clients = await _open(port, first.id, STREAMS)
            await asyncio.sleep(5)  # every stream started
            peak, threads, conns = 0, 0, 0
            writer = start_writer(SECONDS, 1.0)
            for _ in range(SECONDS):
                await asyncio.sleep(1)
                threads = _threads(server.pid)
                peak = max(peak, threads)
                conns = max(conns, await asyncio.to_thread(_connections))
            written = await asyncio.to_thread(written_times, writer)
            await asyncio.sleep(3)  # the last write's events
            await _close(clients)
            return clients, written, peak, threads, conns

        clients, written, peak, threads, conns = asyncio.run(run())
        aborted = sum(c.aborted for c in clients)
        missed = sum(not c.aborted and len(c.got) < len(written) for c in clients)
        latencies = [
            (c.got[i] - at) * 1000 for c in clients for i, at in written.items() if i in c.got
        ]
        p50, p99 = _percentiles(latencies)
        rows.append(
            Row(
                "15 follow-scale",
                f"{STREAMS} SSE streams, one uvicorn worker, a write/s for {SECONDS} s",
                f"p50 {p50:.0f} ms, p99 {p99:.0f} ms; {aborted} aborted, {missed} missed"
                f" events; threads {threads} at the end (peak {peak}); {conns} DB connections",
                "main: 418 aborted, 1,002 threads",
                "",
                "0 aborted, threads << streams",
                met(aborted == 0 and missed == 0 and threads < STREAMS / 10),
            )
        )

        async def idle() -> float:
            clients = await _open(port, first.id, IDLE)
            await asyncio.sleep(5)
            before, start = await asyncio.to_thread(_transactions), time.monotonic()
            await asyncio.sleep(10)
            after, end = await asyncio.to_thread(_transactions), time.monotonic()
            await _close(clients)
            return (after - before - 2) / (end - start)  # less the two probes' own

        print(rows[-1], file=sys.stderr, flush=True)
        rate = asyncio.run(idle())
        rows.append(
            Row(
                "15 follow-scale",
                f"{IDLE} idle SSE streams of one chronicum: transactions/s",
                f"{rate:.1f}",
                "main: 307",
                "",
                "<= 5",
                met(rate <= 5),
            )
        )
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:  # uvicorn still closing a thousand streams
            server.kill()
            server.wait(30)
    return rows


def follow_scale() -> list[Row]:
    return pooler() + streams()


if __name__ == "__main__" and sys.argv[1:2] == ["--latency"]:
    import django

    django.setup()
    _latency_here()
elif __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    import django

    django.setup()
    from .database import ensure_database
    from .report import table

    ensure_database()
    print(table(follow_scale()))
