"""Four worker processes write into one chronicum on PostgreSQL at once.

ardian and three agents each run in their own process (as Celery workers would),
all start their first write into the same new chronicum together, and keep
writing. Every actum lands, and each writer's own acta come back in the order it
wrote them.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connection

from chronica import ActorKind, services

from ..scenario import OWNER

pytestmark = pytest.mark.django_db(transaction=True)

CHRONICUM = "dinner-friday-workers"
WRITERS = {
    "ardian": ActorKind.HUMAN,
    "concierge": ActorKind.AGENT,
    "search": ActorKind.AGENT,
    "booking": ActorKind.AGENT,
}
PER_WRITER = 60

# One worker: set Django up on the test database, say "ready", wait for "go", write.
WORKER = """
import sys
import django
django.setup()
from django.db import connection
from chronica import Actum, services

owner, chronicum_id, actor, actor_kind, count = sys.argv[1:]
connection.ensure_connection()
print("ready", flush=True)
sys.stdin.readline()
for i in range(int(count)):
    services.record_actum(owner, Actum(
        chronicum_id=chronicum_id, kind="message", actor_kind=actor_kind,
        actor=actor, content=f"{actor} #{i}",
    ))
connection.close()
"""


def worker_env() -> dict[str, str]:
    """The environment of a worker process: tests.settings pointed at this run's test database."""
    s = connection.settings_dict
    password = f":{quote(s['PASSWORD'], safe='')}" if s["PASSWORD"] else ""
    url = f"postgres://{quote(s['USER'], safe='')}{password}@{s['HOST']}:{s['PORT']}/{s['NAME']}"
    root = str(Path(__file__).resolve().parents[2])
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "CHRONICA_TEST_DB": "postgres",
        "CHRONICA_TEST_PG_URL": url,
        "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
    }


def test_four_processes_write_into_one_chronicum():
    if connection.vendor != "postgresql":
        pytest.skip("the multi-process test runs on PostgreSQL only (SQLite is one file)")
    env = worker_env()
    workers = {
        actor: subprocess.Popen(
            [sys.executable, "-c", WORKER, OWNER, CHRONICUM, actor, kind, str(PER_WRITER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for actor, kind in WRITERS.items()
    }
    try:
        for actor, worker in workers.items():
            line = worker.stdout.readline()
            assert line == "ready\n", f"{actor} did not start: {line}{worker.stderr.read()}"
        # Every worker is connected and waiting: release them together.
        for worker in workers.values():
            worker.stdin.write("go\n")
            worker.stdin.flush()
        for actor, worker in workers.items():
            _, errors = worker.communicate(timeout=300)
            assert worker.returncode == 0, f"{actor} failed:\n{errors}"
    finally:
        for worker in workers.values():
            worker.kill()
            worker.wait()

    acta = services.get_acta(OWNER, CHRONICUM)
    assert len(acta) == len(WRITERS) * PER_WRITER
    assert len({a.id for a in acta}) == len(acta)
    for actor, kind in WRITERS.items():
        own = [a for a in acta if a.actor == actor]
        assert [a.content for a in own] == [f"{actor} #{i}" for i in range(PER_WRITER)]
        assert {a.actor_kind for a in own} == {kind}
    assert services.get_chronicum(OWNER, CHRONICUM).last_activity_at == max(a.at for a in acta)
    # How much the writers interleaved depends on the scheduler; shown, not asserted.
    switches = sum(1 for a, b in itertools.pairwise(acta) if a.actor != b.actor)
    print(f"{len(acta)} acta from {len(WRITERS)} processes, {switches} writer switches")
