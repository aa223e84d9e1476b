"""A database that goes silent mid-statement (a network black hole): with the example's
OPTIONS (TCP keepalives, ``tcp_user_timeout``) the statement fails within seconds,
instead of waiting for the whole outage.

The black hole is real and private: Django runs in a network namespace of its own
(``unshare -n``, root only), where PostgreSQL is reached through a relay on the
namespace's loopback. Taking that loopback down drops every packet of the connection
silently, as a network that fails does; nothing outside the namespace is touched (the
relay reaches the server through a Unix socket, which no network namespace divides).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest
from django.db import connection

from tests.exampleproject import PYTHON, ROOT

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# More than the example's bound (10 s for an unacknowledged statement; keepalives after
# 5 + 3 x 2 s), far less than an outage: it stops a connection that hangs from hanging
# the run.
BOUND = 40

IN_THE_NAMESPACE = r"""
import json, os, socket, subprocess, sys, threading, time

subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
relay = socket.create_server(("127.0.0.1", 0))


def pipe(source, target):
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass


def serve():
    while True:
        client, _ = relay.accept()
        upstream = socket.socket(socket.AF_UNIX)
        upstream.connect(sys.argv[1])
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=pipe, args=(a, b), daemon=True).start()


threading.Thread(target=serve, daemon=True).start()
os.environ["DATABASE_URL"] = sys.argv[2].replace("PORT", str(relay.getsockname()[1]))

import django

django.setup()
from django.db import OperationalError, connection

with connection.cursor() as cursor:
    cursor.execute("SELECT 1")
subprocess.run(["ip", "link", "set", "lo", "down"], check=True)  # the black hole
started = time.monotonic()
try:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    outcome = "answered"
except OperationalError as exc:
    outcome = f"OperationalError: {exc}"
print(json.dumps({"outcome": outcome, "seconds": time.monotonic() - started}))
"""


def forward(
    unix_path: Path,
    host: str,
    port: int,
    stop: threading.Event,
    opened: list[tuple[socket.socket, int]],
) -> None:
    """Accept on ``unix_path``; each connection piped to PostgreSQL at ``host:port``."""
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(unix_path))
    server.listen()
    server.settimeout(0.2)

    def pipe(source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        finally:
            target.close()

    while not stop.is_set():
        try:
            client, _ = server.accept()
        except TimeoutError:
            continue
        upstream = socket.create_connection((host, port))
        opened.append((upstream, upstream.getsockname()[1]))
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=pipe, args=(a, b), daemon=True).start()
    server.close()


def end_backends(ports: list[int]) -> None:
    """End the server's backends of the forwarded connections, which the black hole
    left waiting (the test database is dropped at the end of the run, and nobody may be
    connected to it then). Only this test database's: another run on the same server
    (make test's legs run at once) may have been given one of these ports since."""
    from tests.database import server_connection

    with server_connection() as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE client_port = ANY(%s) AND datname = current_database()"
            " AND pid <> pg_backend_pid()",
            [ports],
        )


def test_a_statement_to_a_silent_database_fails_within_the_bound(tmp_path: Path):
    if connection.vendor != "postgresql":
        pytest.skip("a PostgreSQL connection's keepalives: this run is on SQLite")
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"):
        pytest.skip("a network namespace of the test's own needs root, unshare and ip")
    db = connection.settings_dict
    unix_path = tmp_path / "pg.sock"
    stop, opened = threading.Event(), []
    forwarder = threading.Thread(
        target=forward,
        args=(unix_path, db["HOST"] or "127.0.0.1", int(db["PORT"] or 5432), stop, opened),
        daemon=True,
    )
    forwarder.start()
    url = f"postgres://{db['USER'] or 'postgres'}@127.0.0.1:PORT/{db['NAME']}"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "example_project.settings",
        "PYTHONPATH": str(ROOT),
    }
    try:
        done = subprocess.run(
            ["unshare", "-n", PYTHON, "-c", IN_THE_NAMESPACE, str(unix_path), url],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=BOUND,
            check=False,
        )
    finally:
        stop.set()
        forwarder.join()
        for sock, _ in opened:
            # Shut down, not only closed: a pipe thread blocked on it would keep it open.
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        end_backends([port for _, port in opened])
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["outcome"].startswith("OperationalError"), found
    assert found["seconds"] < BOUND
