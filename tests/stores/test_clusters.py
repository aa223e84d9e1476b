"""Against test clusters of our own (tests/clusters.py; PostgreSQL run only, skipped
with the reason printed where PostgreSQL's server binaries are missing):

- a replica held behind by recovery_min_apply_delay serves windows, and a process
  never reads older than its own writes (CHRONICA["READ_DATABASES"]);
- with synchronous replication, kill -9 of the primary while 4 writers write keyed
  batches, promotion of the standby: nothing acknowledged is lost, a keyed retry lands
  once, and each chronicum keeps its write order.

Each prints its figures and is bounded in time."""

from __future__ import annotations

import itertools
import json
import time

import pytest

from ..clusters import cluster

pytestmark = pytest.mark.once

DELAY_MS = 20


def test_a_lagging_replica_never_serves_a_read_older_than_the_own_write():
    with cluster(delay_ms=DELAY_MS) as c:
        primary = c.database(c.primary_port)
        databases = {"default": primary, "replica": c.database(c.replica_port)}
        c.run("migrate", databases={"default": primary}, timeout=120)
        answer = c.run("reads", "1000", "20", databases=databases, read=["replica"], timeout=120)
    print(f"\nread replicas (recovery_min_apply_delay {DELAY_MS} ms): {json.dumps(answer)}")
    assert answer["pairs"] > 0
    assert answer["stale"] == 0
    # The replica is behind: read from it directly, the own write is often missing.
    assert answer["stale_without_read_your_writes"] > 0
    assert answer["replica_reads"] + answer["primary_reads"] >= answer["pairs"]


WRITERS = 4


def test_failover_loses_nothing_acknowledged_and_keeps_the_order(tmp_path):
    with cluster(sync=True) as c:
        c.run("migrate", databases={"default": c.database(c.primary_port)}, timeout=120)
        databases = {"default": c.failover_database()}
        names = [f"writer-{n}" for n in range(WRITERS)]
        logs = {name: tmp_path / f"{name}.log" for name in names}
        writers = [
            c.run("writer", name, "10", str(logs[name]), databases=databases, background=True)
            for name in names
        ]
        try:
            # Every writer writing (each has had batches acknowledged), then the kill.
            deadline = time.monotonic() + 60
            while not all(
                log.exists() and len(log.read_text().splitlines()) >= 20 for log in logs.values()
            ):
                assert time.monotonic() < deadline, "the writers did not start writing"
                assert all(w.poll() is None for w in writers), "a writer stopped"
                time.sleep(0.1)
            killed = time.time()
            c.kill_primary()
            c.promote()
            promoted = time.time()
            answers = [json.loads(w.communicate(timeout=90)[0].splitlines()[-1]) for w in writers]
        finally:
            for w in writers:
                if w.poll() is None:
                    w.kill()
        assert all(w.returncode == 0 for w in writers)
        stored = c.run("verify", *names, databases=databases)
    acked = {
        name: [json.loads(line) for line in logs[name].read_text().splitlines()] for name in names
    }
    # Unavailability: the longest time without any acknowledgement, from the kill on.
    times = sorted(at for name in names for _key, at in acked[name])
    around = [at for at in times if at >= killed - 1]
    gaps = [later - earlier for earlier, later in itertools.pairwise(around)]
    unavailable = max(gaps) if gaps and around[-1] > killed else None
    print(
        f"\nfailover: {WRITERS} writers, {answers}; promoted {promoted - killed:.2f} s after"
        f" the kill; no write acknowledged for {unavailable:.2f} s"
        if unavailable is not None
        else f"\nfailover: no write acknowledged after the kill: {answers}"
    )
    assert unavailable is not None
    for name in names:
        keys = [key for key, _at in acked[name]]
        expected = [f"{key}/{part}" for key in keys for part in range(3)]
        contents = stored[name]
        # Every acknowledged batch, once, in write order; at most the one batch
        # being written when the writer stopped beyond them (none: each was retried
        # until acknowledged).
        assert contents == expected, (name, len(contents), len(expected))
        assert any(at > killed for _key, at in acked[name])
        assert any(at < killed for _key, at in acked[name])
