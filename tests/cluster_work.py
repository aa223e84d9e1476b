"""What a process of chronica does against a test cluster (tests/clusters.py), one
command a run; the last line printed is its answer, as JSON.

    python -m tests.cluster_work migrate
    python -m tests.cluster_work reads PAIRS SECONDS
    python -m tests.cluster_work writer NAME SECONDS LOG
    python -m tests.cluster_work verify NAME...
    python -m tests.cluster_work restart DIR
"""

from __future__ import annotations

import json
import sys
import time

import django

OWNER = "ardian"


def _actum(chronicum_id: str, content: str):
    from chronica import ActorKind, Actum, ActumKind

    return Actum(
        chronicum_id=chronicum_id,
        kind=ActumKind.MESSAGE,
        actor_kind=ActorKind.AGENT,
        actor="writer",
        content=content,
    )


def migrate() -> dict:
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return {"migrated": True}


def reads(pairs: int, seconds: float) -> dict:
    """Write an actum, then read the window: is the actum in it? Up to ``pairs`` pairs
    or ``seconds``. Then the same from the replica directly, without read-your-writes,
    to show the replica is behind."""
    from chronica import services
    from chronica.stores.db import DjangoStore, replicas
    from chronica.values import ActaQuery

    chronicum = services.create_chronicum(OWNER).id
    stale = done = 0
    start = time.monotonic()
    while done < pairs and time.monotonic() - start < seconds:
        written = services.record_actum(OWNER, _actum(chronicum, f"turn {done}"))
        window = services.get_acta(OWNER, chronicum, last_n=1)
        stale += not window or window[-1].id != written.id
        done += 1
    elapsed = time.monotonic() - start
    served = dict(replicas.stats)
    replica = DjangoStore(using="replica")
    unguarded = 0
    for n in range(20):
        written = services.record_actum(OWNER, _actum(chronicum, f"unguarded {n}"))
        window = replica.acta(chronicum, ActaQuery(last_n=1))
        unguarded += not window or window[-1].id != written.id
    return {
        "pairs": done,
        "stale": stale,
        "replica_reads": served["replica"],
        "primary_reads": served["primary"],
        "seconds": round(elapsed, 2),
        "stale_without_read_your_writes": unguarded,
        "of": 20,
    }


def writer(name: str, seconds: float, log: str) -> dict:
    """Write keyed batches of 3 into chronicum ``name`` for ``seconds``, retrying each
    (same key) until it is acknowledged; log each acknowledgement (key, time)."""
    from django.db import DatabaseError

    from chronica import services

    services.create_chronicum(OWNER, name)
    start = time.monotonic()
    turn = retries = 0
    with open(log, "a") as out:
        while time.monotonic() - start < seconds:
            key = f"{name}-{turn}"
            batch = [_actum(name, f"{key}/{part}") for part in range(3)]
            while True:
                try:
                    services.record_acta(OWNER, batch, idempotency_key=key)
                    break
                except DatabaseError:
                    retries += 1
                    if time.monotonic() - start > seconds + 60:
                        raise
                    time.sleep(0.05)
            out.write(json.dumps([key, time.time()]) + "\n")
            out.flush()
            turn += 1
    return {"turns": turn, "retries": retries}


def verify(*names: str) -> dict:
    """Per chronicum: the contents in write order, and the keys stored."""
    from chronica import services

    found = {}
    for name in names:
        acta = services.get_acta(OWNER, name)
        found[name] = [a.content for a in acta]
    return found


def restart(directory: str) -> dict:
    """Record, restart the cluster's primary under the open connection, record again:
    the call that meets the dead connection may fail (DatabaseError), the next works
    on a new connection, and nothing is lost or doubled."""
    import contextlib
    import subprocess
    from pathlib import Path

    from django.db import DatabaseError, connection

    from chronica import services

    chronicum = services.create_chronicum(OWNER, "restart").id
    before = services.record_actum(OWNER, _actum(chronicum, "before the restart")).id
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    script = Path(__file__).resolve().parent.parent / "scripts" / "pg-cluster.sh"
    subprocess.run(["bash", str(script), "restart-primary", directory], check=True, timeout=120)
    failed = 0
    with contextlib.suppress(DatabaseError):
        services.get_acta(OWNER, chronicum)
        failed = -1
    failed += 1
    after = services.record_actum(OWNER, _actum(chronicum, "after the restart")).id
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        new_pid = cursor.fetchone()[0]
    return {
        "acta": [a.id for a in services.get_acta(OWNER, chronicum)],
        "written": [before, after],
        "first_call_failed": bool(failed),
        "new_connection": new_pid != pid,
    }


COMMANDS = {
    "migrate": migrate,
    "reads": reads,
    "writer": writer,
    "verify": verify,
    "restart": restart,
}


def main(argv: list[str]) -> None:
    django.setup()
    command, *args = argv
    function = COMMANDS[command]
    if command == "reads":
        answer = function(int(args[0]), float(args[1]))
    elif command == "writer":
        answer = function(args[0], float(args[1]), args[2])
    else:
        answer = function(*args)
    print(json.dumps(answer))


if __name__ == "__main__":
    main(sys.argv[1:])
