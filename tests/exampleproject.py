"""Run example_project in a subprocess on the test database of this pytest run."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO
from urllib.parse import quote

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent


def database_url() -> str:
    """The test database as a ``DATABASE_URL`` that example_project/settings.py reads."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    if connection.vendor == "postgresql":
        auth = quote(db["USER"] or "postgres", safe="")
        if db["PASSWORD"]:
            auth += ":" + quote(db["PASSWORD"], safe="")
        return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    raise AssertionError(f"example_project runs on SQLite or PostgreSQL, not {connection.vendor}")


def environment(**extra: str) -> dict[str, str]:
    """The environment of ``python manage.py ...`` pointed at the test database."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "example_project.settings",
        "DATABASE_URL": database_url(),
        "PYTHONPATH": str(ROOT),
        "PYTHONIOENCODING": "utf-8",
        "DJANGO_DEBUG": "0",  # served as deployed, whatever the developer's shell says
        **extra,
    }


PYTHON = sys.executable


def stop(process: subprocess.Popen[bytes]) -> None:
    """End a server or worker this test started: politely, then for sure."""
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def get(url: str, **headers: str) -> tuple[int, bytes]:
    """``(status, body)`` of a GET; an HTTP error status is an answer, not an exception."""
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def wait_for(url: str, server: subprocess.Popen[bytes], log: IO[str]) -> int:
    """The status of the first answer from ``url`` once the server listens.

    Waiting for the server to listen is setup, not a measurement: the deadline
    only stops a server that never starts from hanging the run. It runs from the
    server's last word: a server that prints as it goes (the demo runs an agent on
    each framework before it serves, minutes on a loaded two-core machine) is not stuck.
    """
    written, deadline = -1, 0.0
    while True:
        try:
            return get(url)[0]
        except OSError:
            size = log.seek(0, os.SEEK_END)
            if size != written:
                written, deadline = size, time.monotonic() + STALLED
            if server.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                pytest.fail(f"the server never answered {url}:\n{log.read()}")
            time.sleep(0.2)


STALLED = 120
"""Seconds a starting server may go without printing a word before it counts as stuck."""


@contextmanager
def serving(
    command: Sequence[str],
    port: int,
    log_path: Path,
    *,
    cwd: Path = ROOT,
    env: Mapping[str, str] | None = None,
    ready: str = "/admin/login/",
) -> Iterator[str]:
    """Run a server command that listens on ``port``; yield its base URL once ``ready`` answers."""
    base = f"http://127.0.0.1:{port}"
    with log_path.open("w+", encoding="utf-8") as log:
        server = subprocess.Popen(
            list(command),
            cwd=cwd,
            env=dict(env) if env is not None else environment(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for(f"{base}{ready}", server, log)
            yield base
        finally:
            stop(server)
