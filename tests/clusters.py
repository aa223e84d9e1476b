"""Test clusters of our own: a PostgreSQL primary and a streaming replica started from
the machine's binaries by scripts/pg-cluster.sh (initdb, pg_basebackup -R, free ports,
a temporary directory), stopped and removed at the end. Nothing of the shared server
at 5432 is touched. Where the binaries are missing the test is skipped, and the
reason printed.

Chronica runs against a cluster in processes of its own (``python -m
tests.cluster_work``), with DATABASES naming the cluster's servers
(tests/cluster_settings.py): the pytest process keeps its own test database."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "pg-cluster.sh"
MISSING = 3  # pg-cluster.sh's exit status when the binaries are missing


@dataclass
class Cluster:
    directory: Path
    primary_port: int
    replica_port: int

    def _script(self, command: str) -> None:
        subprocess.run(["bash", str(SCRIPT), command, str(self.directory)], check=True, timeout=120)

    def kill_primary(self) -> None:
        """kill -9 the primary's postmaster and its processes."""
        self._script("kill-primary")

    def promote(self) -> None:
        self._script("promote")

    def database(self, port: int, **options: Any) -> dict[str, Any]:
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": "postgres",
            "USER": "postgres",
            "HOST": "127.0.0.1",
            "PORT": str(port),
            "OPTIONS": options,
        }

    def failover_database(self) -> dict[str, Any]:
        """One DATABASES entry for both servers: libpq tries them in turn and keeps
        the one that takes writes."""
        return {
            **self.database(self.primary_port, target_session_attrs="read-write"),
            "HOST": "127.0.0.1,127.0.0.1",
            "PORT": f"{self.primary_port},{self.replica_port}",
        }

    def run(
        self,
        *args: str,
        databases: dict[str, Any],
        read: list[str] = (),
        timeout: float = 90,
        background: bool = False,
    ) -> Any:
        """``python -m tests.cluster_work ARGS`` with DATABASES = ``databases``: its JSON
        answer (or, with ``background``, the process)."""
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "DJANGO_SETTINGS_MODULE": "tests.cluster_settings",
            "CHRONICA_TEST_DB": "postgres",
            "CHRONICA_CLUSTER_DATABASES": json.dumps(databases),
            "CHRONICA_CLUSTER_READ": json.dumps(list(read)),
        }
        command = [sys.executable, "-m", "tests.cluster_work", *args]
        if background:
            return subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        done = subprocess.run(
            command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout
        )
        assert done.returncode == 0, done.stderr[-4000:]
        return json.loads(done.stdout.strip().splitlines()[-1])


@contextlib.contextmanager
def cluster(*, sync: bool = False, delay_ms: int = 0) -> Iterator[Cluster]:
    """A primary and a streaming replica (``sync``: synchronous replication;
    ``delay_ms``: the replica's recovery_min_apply_delay)."""
    if os.environ.get("CHRONICA_TEST_DB") != "postgres":
        pytest.skip("test clusters run in the PostgreSQL run (CHRONICA_TEST_DB=postgres)")
    parent = Path(tempfile.mkdtemp(prefix="chronica-cluster-"))
    parent.chmod(0o755)  # the servers run as postgres when the tests run as root
    directory = parent / "cluster"
    options = [*(["--sync"] if sync else []), "--delay", str(delay_ms)]
    try:
        started = subprocess.run(
            ["bash", str(SCRIPT), "start", str(directory), *options],
            capture_output=True,
            text=True,
            timeout=240,
        )
        if started.returncode == MISSING:
            reason = f"no test cluster: {started.stderr.strip()}"
            print(reason, file=sys.stderr)
            pytest.skip(reason)
        if started.returncode != 0:
            raise RuntimeError(f"pg-cluster.sh start failed: {started.stderr[-4000:]}")
        env = dict(line.split("=", 1) for line in started.stdout.split() if "=" in line)
        yield Cluster(directory, int(env["PRIMARY_PORT"]), int(env["REPLICA_PORT"]))
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", str(directory)], timeout=120, check=False)
        shutil.rmtree(parent, ignore_errors=True)
