"""14. Follow latency: from a write's commit to each follower, on PostgreSQL.

A writer in a process of its own records one actum every 20 ms and notes when each
``record_actum`` returned (the commit, as the writer knows it). Eight followers note
when each actum reaches them: eight ``services.afollow`` iterators in this process,
then eight EventSource-like clients of the stream endpoint, served by uvicorn in a
third process. The latency is the follower's time minus the writer's (both
``time.perf_counter``, one clock for every process of the machine).

``python -m benchmarks.follow`` runs it alone. The writer (``--write``) and the
server (``--serve``) are this module too.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .report import Row

ROOT = Path(__file__).resolve().parent.parent
OWNER = "ardian"
CHRONICUM = "bench-follow"
FOLLOWERS = 8
WRITES = 200
PAUSE = 0.02  # seconds between two writes


def follow_message(n: int) -> Any:
    from chronica import Actum

    return Actum(
        chronicum_id=CHRONICUM,
        kind="message",
        actor_kind="agent",
        actor="booking",
        content=f"Held a table at Rumah Teduh ({n}).",
    )


# -- the writer (its own process) ------------------------------------------------


def _write(n: int, pause: float) -> None:
    """Record ``n`` acta, then print each one's ID and the moment its write returned."""
    from chronica import services

    done = []
    for i in range(n):
        actum = services.record_actum(OWNER, follow_message(i))
        done.append((actum.id, time.perf_counter()))
        time.sleep(pause)
    print(json.dumps(done), flush=True)


def start_writer(n: int = WRITES, pause: float = PAUSE) -> subprocess.Popen[str]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "benchmarks.settings"}
    command = [sys.executable, "-m", "benchmarks.follow", "--write", str(n), str(pause)]
    return subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.PIPE, text=True)


def written_times(writer: subprocess.Popen[str]) -> dict[str, float]:
    out, _ = writer.communicate(timeout=300)
    if writer.returncode:
        raise SystemExit("the benchmark's writer failed")
    return dict(json.loads(out.splitlines()[-1]))


# -- the server (its own process) -------------------------------------------------


class _Agent:
    """The one caller of the benchmark's server, signed in as the benchmark's owner."""

    pk = OWNER
    is_authenticated = True


class BenchAuthentication:
    """Everyone is the benchmark's owner (no user table needed)."""

    def authenticate(self, request: Any) -> tuple[_Agent, None]:
        return _Agent(), None

    def authenticate_header(self, request: Any) -> str:
        return ""


def __getattr__(name: str) -> Any:
    # The server's ROOT_URLCONF is this module; its routes are built on first use,
    # so that importing the module needs no API and no settings.
    if name != "urlpatterns":
        raise AttributeError(name)
    from rest_framework.routers import SimpleRouter

    from chronica.api.routers import optional_slash
    from chronica.api.stream import ActaStreamMixin
    from chronica.api.views import ChronicumViewSet

    viewset = ChronicumViewSet
    if not issubclass(viewset, ActaStreamMixin):  # until chronica.api.views registers it
        viewset = type("StreamingChronicumViewSet", (ActaStreamMixin, ChronicumViewSet), {})
    router = SimpleRouter()
    router.register("chronica", viewset, basename="chronicum")
    global urlpatterns
    urlpatterns = optional_slash(router.urls)
    return urlpatterns


def _serve(port: int) -> None:
    import django
    import uvicorn
    from django.conf import settings

    from . import settings as bench

    settings.configure(
        SECRET_KEY="chronica-benchmarks-only",
        DEBUG=False,
        USE_TZ=True,
        ALLOWED_HOSTS=["127.0.0.1"],
        DATABASES=bench.DATABASES,
        INSTALLED_APPS=[
            "django.contrib.contenttypes",
            "django.contrib.auth",
            "rest_framework",
            "chronica",
        ],
        ROOT_URLCONF="benchmarks.follow",
        CHRONICA={k: v for k, v in bench.CHRONICA.items() if k != "STORE"},
        DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
        REST_FRAMEWORK={
            "DEFAULT_AUTHENTICATION_CLASSES": ["benchmarks.follow.BenchAuthentication"],
            "DEFAULT_PERMISSION_CLASSES": [],
        },
    )
    django.setup()
    from django.core.asgi import get_asgi_application

    uvicorn.run(get_asgi_application(), host="127.0.0.1", port=port, log_level="warning")


def start_server() -> tuple[subprocess.Popen[str], int]:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "benchmarks.follow", "--serve", str(port)]
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    process = subprocess.Popen(command, env=env, cwd=ROOT, text=True)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            return process, port
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise SystemExit("the benchmark's uvicorn did not start") from None
            time.sleep(0.1)


# -- the followers ----------------------------------------------------------------


async def afollowers_and_writer(after: str) -> tuple[list[dict[str, float]], dict[str, float]]:
    from chronica import services

    async def follower() -> dict[str, float]:
        got: dict[str, float] = {}
        async for actum in services.afollow(OWNER, CHRONICUM, after=after):
            got[actum.id] = time.perf_counter()
            if len(got) == WRITES:
                break
        return got

    tasks = [asyncio.ensure_future(follower()) for _ in range(FOLLOWERS)]
    await asyncio.sleep(1)  # every follower in place, and the listener's lock taken
    writer = start_writer()
    async with asyncio.timeout(300):
        seen = await asyncio.gather(*tasks)
    return seen, await asyncio.to_thread(written_times, writer)


async def _sse_clients(port: int, after: str) -> list[dict[str, float]]:
    async def client() -> dict[str, float]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        path = f"/chronica/{CHRONICUM}/acta/stream/?after={after}"
        writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        got: dict[str, float] = {}
        try:
            while len(got) < WRITES:
                line = await reader.readline()
                if not line:
                    raise SystemExit("the benchmark's stream ended")
                if line.startswith(b"id: "):
                    got[line[4:].strip().decode()] = time.perf_counter()
        finally:
            writer.close()
        return got

    return await asyncio.gather(*(client() for _ in range(FOLLOWERS)))


def follow_latencies(seen: list[dict[str, float]], written: dict[str, float]) -> list[float]:
    return [(at - written[actum_id]) * 1000 for got in seen for actum_id, at in got.items()]


def _row(what: str, latencies: list[float]) -> Row:
    from .report import Row, met

    p50 = statistics.median(latencies)
    p99 = statistics.quantiles(latencies, n=100)[98]
    return Row(
        "14 follow",
        what,
        f"p50 {p50:.1f} ms, p99 {p99:.1f} ms",
        target="p99 <= 50 ms",
        met=met(p99 <= 50),
    )


def follow() -> list[Row]:
    """Rows for the table: commit-to-follower latency of afollow and of the stream."""
    from django.db import connections

    from chronica import services

    first = services.record_actum(OWNER, follow_message(-1))
    connections.close_all()

    seen, written = asyncio.run(afollowers_and_writer(first.id))
    rows = [
        _row(f"commit -> afollow yield, {FOLLOWERS} followers", follow_latencies(seen, written))
    ]

    last = services.record_actum(OWNER, follow_message(-2))
    connections.close_all()
    server, port = start_server()
    try:

        async def over_http() -> tuple[list[dict[str, float]], dict[str, float]]:
            clients = asyncio.ensure_future(_sse_clients(port, last.id))
            await asyncio.sleep(1)
            writer = start_writer()
            async with asyncio.timeout(300):
                got = await clients
            return got, await asyncio.to_thread(written_times, writer)

        seen, written = asyncio.run(over_http())
    finally:
        server.terminate()
        server.wait(30)
    rows.append(
        _row(
            f"commit -> SSE event, {FOLLOWERS} clients of one uvicorn process",
            follow_latencies(seen, written),
        )
    )
    return rows


if __name__ == "__main__" and sys.argv[1:2] == ["--write"]:
    import django

    django.setup()
    _write(int(sys.argv[2]), float(sys.argv[3]))
elif __name__ == "__main__" and sys.argv[1:2] == ["--serve"]:
    _serve(int(sys.argv[2]))
elif __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    import django

    django.setup()
    from .database import ensure_database
    from .report import table

    ensure_database()
    print(table(follow()))
