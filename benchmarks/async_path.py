"""13. The asyncio path against today's a* path, with PostgreSQL 1 ms away.

32 asyncio tasks, each recording into its own chronicum, on one event loop: once
through ``sync_to_async(Chronicarius.record_actum)`` (what every a* call did before
the asyncio path: each call hops to the one shared worker thread) and once through
``Chronicarius.arecord_actum`` on the asyncio path (psycopg async connections from
the pool), in alternating rounds of the same run. Both talk to PostgreSQL through a
TCP proxy, in a process of its own, that holds every chunk 1 ms in each direction.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from asgiref.sync import sync_to_async

from chronica import ActorKind, Actum, ActumKind
from chronica.services import Chronicarius

from .timing import median, paired_ratio

if TYPE_CHECKING:
    from .cases import Row

# Django's settings are needed only by the measure: the proxy's process runs this
# module without them.
OWNER = "ardian"

_ROOT = Path(__file__).resolve().parent.parent
ALIAS = "proxied"
TASKS = 32
DELAY = 0.001  # seconds, each way


# -- the proxy ---------------------------------------------------------------


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, delay: float) -> None:
    """Forward ``src`` to ``dst``, each chunk ``delay`` seconds after it arrived, in order."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def deliver() -> None:
        while True:
            due, data = await queue.get()
            if not data:
                break
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            dst.write(data)
            await dst.drain()
        dst.close()

    delivering = asyncio.ensure_future(deliver())
    try:
        while data := await src.read(65536):
            queue.put_nowait((loop.time() + delay, data))
    except ConnectionError:
        pass
    queue.put_nowait((0.0, b""))
    await delivering


async def _serve(host: str, port: int, delay: float) -> None:
    async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_connection(host, port)
        await asyncio.gather(
            _pipe(client_r, server_w, delay),
            _pipe(server_r, client_w, delay),
            return_exceptions=True,
        )

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()


class Proxy:
    """The delaying proxy, in a process of its own so that it takes no CPU from the
    benchmark's event loop; ``port`` is where it listens."""

    def __init__(self, host: str, port: int, delay: float = DELAY) -> None:
        command = [sys.executable, "-m", "benchmarks.async_path", "--proxy", host, str(port)]
        self.process = subprocess.Popen(
            [*command, str(delay)], stdout=subprocess.PIPE, text=True, cwd=_ROOT
        )
        assert self.process.stdout is not None
        self.port = int(self.process.stdout.readline())

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(10)


def proxied_alias(port: int) -> str:
    """A database alias for the benchmark database through the proxy."""
    from django.db import connections

    # Added at run time, so that the benchmark settings stay those of every case.
    settings = copy.deepcopy(connections.settings["default"])
    settings.update(HOST="127.0.0.1", PORT=str(port))
    connections.settings[ALIAS] = settings
    return ALIAS


# -- the measure -------------------------------------------------------------


def _message(chronicum_id: str, n: int) -> Actum:
    return Actum(
        chronicum_id=chronicum_id,
        kind=ActumKind.MESSAGE,
        actor_kind=ActorKind.AGENT,
        actor="booking",
        content=f"table for four at eight? ({n})",
    )


async def _acta_per_second(record: Callable[[str, int], Awaitable[object]], ops: int) -> float:
    count = itertools.count()

    async def agent(i: int) -> None:
        for _ in range(ops):
            await record(f"bench-async-{i}", next(count))

    start = time.perf_counter()
    await asyncio.gather(*(agent(i) for i in range(TASKS)))
    return TASKS * ops / (time.perf_counter() - start)


async def _rounds(chronicarius: Chronicarius, ops: int, n_rounds: int) -> dict[str, list[float]]:
    thread = sync_to_async(chronicarius.record_actum)

    def via_thread(cid: str, n: int) -> Awaitable[object]:
        return thread(OWNER, _message(cid, n))

    def via_asyncio(cid: str, n: int) -> Awaitable[object]:
        return chronicarius.arecord_actum(OWNER, _message(cid, n))

    sides = {"thread": via_thread, "asyncio": via_asyncio}
    for record in sides.values():  # connections open, statements warm
        await _acta_per_second(record, 2)
    got: dict[str, list[float]] = {name: [] for name in sides}
    for r in range(n_rounds):
        order = list(sides) if r % 2 == 0 else list(sides)[::-1]
        for name in order:
            got[name].append(await _acta_per_second(sides[name], ops))
    return got


async def _round_trip_ms(chronicarius: Chronicarius, n: int = 50) -> float:
    """The median time of one asyncio-path read: what a round trip costs through the proxy."""
    times = []
    for _ in range(n):
        start = time.perf_counter()
        await chronicarius.aget_chronicum(OWNER, "bench-async-0")
        times.append(time.perf_counter() - start)
    return median(times) * 1000


def async_path(*, ops: int = 20, n_rounds: int = 11) -> list[Row]:
    """Rows for the table: acta/s of each side, their paired ratio, and the proxy's delay."""
    from django.conf import settings

    from chronica.stores.db import DjangoStore

    db = settings.DATABASES["default"]
    proxy = Proxy(db["HOST"] or "127.0.0.1", int(db["PORT"] or 5432))
    try:
        chronicarius = Chronicarius(DjangoStore(using=proxied_alias(proxy.port)))
        for i in range(TASKS):
            chronicarius.record_actum(OWNER, _message(f"bench-async-{i}", -1))

        async def run() -> tuple[dict[str, list[float]], float]:
            got = await _rounds(chronicarius, ops, n_rounds)
            return got, await _round_trip_ms(chronicarius)

        got, round_trip = asyncio.run(run())
    finally:
        proxy.close()
        from django.db import connections

        connections.close_all()
    from .cases import Row, _met, _ops

    ratio = paired_ratio(got["asyncio"], got["thread"])
    measure = f"arecord_actum, {TASKS} tasks into {TASKS} sessions, PostgreSQL 1 ms each way"
    return [
        Row(
            "13 asyncio",
            f"{measure}: the asyncio path; baseline: today's a* path in a thread",
            _ops(median(got["asyncio"])),
            _ops(median(got["thread"])),
            f"{ratio:.2f}",
            ">= 4.00",
            _met(ratio >= 4),
        ),
        Row("13 asyncio", "one read's round trip through the proxy", f"{round_trip:.1f} ms"),
    ]


if __name__ == "__main__" and sys.argv[1:2] == ["--proxy"]:
    asyncio.run(_serve(sys.argv[2], int(sys.argv[3]), float(sys.argv[4])))
elif __name__ == "__main__":
    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    import django

    django.setup()
    from .__main__ import table
    from .database import ensure_database

    ensure_database()
    print(table(async_path()))
