"""The five measures of issue 6. Each returns rows for the table (and, for growth, the plan)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable

from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

from chronica import ActorKind, Actum, ActumKind, services
from chronica.services import Chronicarius
from chronica.stores.db import DjangoStore

from .database import OWNER
from .floor import Floor
from .timing import median, paired_ratio, rounds

SESSIONS = {
    "bench-warm": 20,
    "bench-record-chronica": 0,
    "bench-record-prepared": 0,
    "bench-record-floor": 0,
    "bench-10k": 10_000,
    "bench-1k": 1_000,
    "bench-100k": 100_000,
    "bench-1m": 1_000_000,
    **{f"bench-conc-{i}": 0 for i in range(8)},
}


@dataclasses.dataclass(frozen=True)
class Row:
    case: str
    measure: str
    chronica: str = ""
    floor: str = ""
    ratio: str = ""
    target: str = ""
    met: str = ""


def _met(ok: bool) -> str:
    return "yes" if ok else "NO"


def _ops(value: float) -> str:
    return f"{value:,.0f} ops/s"


def _message(chronicum_id: str, n: int) -> Actum:
    return Actum(
        chronicum_id=chronicum_id,
        kind=ActumKind.MESSAGE,
        actor_kind=ActorKind.HUMAN,
        actor="ardian",
        content=f"table for four at eight? ({n})",
    )


def _against_floor(
    case: str,
    what: str,
    ours: dict[str, Callable[[], object]],
    floor_op: Callable[[], object],
    *,
    ops: int,
    n_rounds: int,
) -> list[Row]:
    got = rounds({**ours, "floor": floor_op}, ops=ops, rounds=n_rounds, warmup=50)
    rows = []
    for label in ours:
        ratio = paired_ratio(got[label], got["floor"])
        rows.append(
            Row(
                case,
                f"{what}, {label}",
                _ops(median(got[label])),
                _ops(median(got["floor"])),
                f"{ratio:.2f}",
                ">= 0.80",
                _met(ratio >= 0.8),
            )
        )
    return rows


DEFAULTS = "Django's defaults"
PREPARED = "prepared statements on"


def record(floor: Floor, *, ops: int, n_rounds: int) -> list[Row]:
    """1. record_actum through chronica.services against the psycopg floor.

    Twice: on Django's default connection (no prepared statements), and on one with
    psycopg's own defaults, the floor's (the same Chronicarius rules, another alias)."""
    count = itertools.count()
    prepared = Chronicarius(DjangoStore(using="prepared"))

    def chronica_op() -> object:
        return services.record_actum(OWNER, _message("bench-record-chronica", next(count)))

    def prepared_op() -> object:
        return prepared.record_actum(OWNER, _message("bench-record-prepared", next(count)))

    def floor_op() -> object:
        n = next(count)
        content = f"table for four at eight? ({n})"
        return floor.record(OWNER, "bench-record-floor", "message", "human", "ardian", content)

    ours = {DEFAULTS: chronica_op, PREPARED: prepared_op}
    return _against_floor("1 record", "record_actum", ours, floor_op, ops=ops, n_rounds=n_rounds)


def window(floor: Floor, *, ops: int, n_rounds: int) -> list[Row]:
    """2. get_acta(last_n=20, kinds=[message]) on 10,000 acta against the floor's one query."""
    ours = [a.id for a in services.get_acta(OWNER, "bench-10k", last_n=20, kinds=["message"])]
    theirs = [row[0] for row in floor.window(OWNER, "bench-10k", ["message"], 20)]
    if ours != theirs or len(ours) != 20:
        raise SystemExit("the floor and chronica disagree on the window: the floor is wrong")
    prepared = Chronicarius(DjangoStore(using="prepared"))

    def chronica_op() -> object:
        return services.get_acta(OWNER, "bench-10k", last_n=20, kinds=[ActumKind.MESSAGE])

    def prepared_op() -> object:
        return prepared.get_acta(OWNER, "bench-10k", last_n=20, kinds=[ActumKind.MESSAGE])

    def floor_op() -> object:
        return floor.window(OWNER, "bench-10k", ["message"], 20)

    return _against_floor(
        "2 window",
        "get_acta(last_n=20, kinds=[message]) on 10k",
        {DEFAULTS: chronica_op, PREPARED: prepared_op},
        floor_op,
        ops=ops,
        n_rounds=n_rounds,
    )


def growth(*, ops: int, n_rounds: int) -> tuple[list[Row], str]:
    """3. get_acta(last_n=20) latency on 1k, 100k and 1M acta, and the plan on 1M."""
    sizes = {"1k": "bench-1k", "100k": "bench-100k", "1M": "bench-1m"}
    sides: dict[str, Callable[[], object]] = {
        label: (lambda cid=cid: services.get_acta(OWNER, cid, last_n=20))
        for label, cid in sizes.items()
    }
    got = rounds(sides, ops=ops, rounds=n_rounds, warmup=50)
    rows = [
        Row("3 growth", f"get_acta(last_n=20), {label} acta", f"{1e6 / median(got[label]):.0f} µs")
        for label in sizes
    ]
    ratio = paired_ratio(got["1k"], got["1M"])  # latency 1M / latency 1k
    # Explain the very statement get_acta sends, as Django logged it with its values.
    with CaptureQueriesContext(connection) as sent:
        services.get_acta(OWNER, "bench-1m", last_n=20)
    statement = sent.captured_queries[-1]["sql"]
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) " + statement)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    uses_index = "acta_chronicum_seq" in plan
    rows.append(
        Row(
            "3 growth",
            "latency 1M / 1k",
            ratio=f"{ratio:.2f}",
            target="<= 1.30",
            met=_met(ratio <= 1.3),
        )
    )
    rows.append(
        Row(
            "3 growth", "window plan uses (chronicum_id, seq)", target="index", met=_met(uses_index)
        )
    )
    return rows, plan


def _threaded(worker: Callable[[int], None], threads: int) -> float:
    """Wall time from the moment all ``threads`` are connected and released to the last finish."""
    ready = threading.Barrier(threads + 1)
    ends: list[float] = []

    def run(i: int) -> None:
        try:
            worker(-1 - i)  # connect outside the measured time
            ready.wait()
            worker(i)
            ends.append(time.perf_counter())
        finally:
            connections.close_all()

    pool = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    ready.wait()
    start = time.perf_counter()
    for t in pool:
        t.join()
    if len(ends) != threads:
        raise SystemExit("a benchmark thread failed")
    return max(ends) - start


def concurrency(conninfo: str, *, ops: int, reps: int, threads: int = 8) -> list[Row]:
    """4. ``threads`` threads recording into ``threads`` sessions, and into one."""
    count = itertools.count()

    def chronica_worker(spread: bool) -> Callable[[int], None]:
        def work(i: int) -> None:
            if i < 0:
                connection.ensure_connection()
                return
            cid = f"bench-conc-{i if spread else 0}"
            for _ in range(ops):
                services.record_actum(OWNER, _message(cid, next(count)))

        return work

    def floor_worker(spread: bool) -> Callable[[int], None]:
        floors: dict[int, Floor] = {}

        def work(i: int) -> None:
            if i < 0:
                floors[-1 - i] = Floor(_conninfo)
                return
            floor, cid = floors.pop(i), f"bench-conc-{i if spread else 0}"
            try:
                for _ in range(ops):
                    floor.record(OWNER, cid, "message", "human", "ardian", f"turn {next(count)}")
            finally:
                floor.close()

        return work

    _conninfo = conninfo
    rows = []
    for spread, label in ((True, f"{threads} threads, {threads} sessions"), (False, "1 session")):
        ours: list[float] = []
        theirs: list[float] = []
        for rep in range(reps):
            pair = [(ours, chronica_worker(spread)), (theirs, floor_worker(spread))]
            for into, worker in pair if rep % 2 == 0 else pair[::-1]:
                into.append(threads * ops / _threaded(worker, threads))
        ratio = paired_ratio(ours, theirs)
        rows.append(
            Row(
                "4 concurrency",
                f"record_actum, {label}" if spread else f"record_actum, {threads} threads, {label}",
                _ops(median(ours)),
                _ops(median(theirs)),
                f"{ratio:.2f}",
            )
        )
    return rows


def _probe(chronicum_id: str, last_n: int) -> dict[str, int]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "benchmarks.settings"}
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.memory", chronicum_id, str(last_n)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.splitlines()[-1])  # type: ignore[no-any-return]


def memory() -> list[Row]:
    """5. Peak RSS rise of one get_acta(last_n=20) on 1k and on 1M acta, each in a fresh process.

    A control reads a whole 100k session, to show the probe sees a whole-session read."""
    small, large = _probe("bench-1k", 20), _probe("bench-1m", 20)
    control = _probe("bench-100k", 0)
    diff_mib = (large["rss_rise_kib"] - small["rss_rise_kib"]) / 1024

    def fmt(p: dict[str, int]) -> str:
        return f"+{p['rss_rise_kib']:,} KiB RSS, {p['traced_peak_kib']:,} KiB traced"

    return [
        Row("5 memory", "get_acta(last_n=20), 1k acta", fmt(small)),
        Row("5 memory", "get_acta(last_n=20), 1M acta", fmt(large)),
        Row(
            "5 memory",
            "1M rise - 1k rise",
            f"{diff_mib:+.1f} MiB",
            target="<= 4 MiB",
            met=_met(diff_mib <= 4),
        ),
        Row("5 memory", "control: get_acta() all of 100k acta", fmt(control)),
    ]
