"""The first five measures (record, window, growth, concurrency, memory) and the cost of the
token estimate; the shared rows and helpers of every case. Each returns rows for the table."""

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
from typing import Any

from django.conf import settings
from django.db import connection, connections

from chronica import ActorKind, Actum, ActumKind, services
from chronica.services import Chronicarius
from chronica.stores.db import DjangoStore

from .database import OWNER, human_message
from .floor import Floor
from .report import DEFAULTS, NOWAIT, PREPARED, Row, met, rate
from .timing import median, paired_ratio, rounds

SESSIONS = {
    "bench-warm": 20,
    "bench-record-chronica": 0,
    "bench-record-prepared": 0,
    "bench-record-floor": 0,
    "bench-record-nowait": 0,
    "bench-record-prepared-nowait": 0,
    "bench-record-floor-nowait": 0,
    "bench-10k": 10_000,
    "bench-1k": 1_000,
    "bench-100k": 100_000,
    "bench-1m": 1_000_000,
    "bench-batch-acta": 0,
    "bench-batch-prepared": 0,
    "bench-batch-single": 0,
    "bench-batch-floor": 0,
    "bench-batch-acta-nowait": 0,
    "bench-batch-prepared-nowait": 0,
    "bench-batch-single-nowait": 0,
    "bench-batch-floor-nowait": 0,
    **{f"bench-conc-{i}": 0 for i in range(8)},
}


def _against_floor(
    case: str,
    what: str,
    ours: dict[str, Callable[[], object]],
    floor_op: Callable[[], object],
    *,
    ops: int,
    n_rounds: int,
    targets: bool = True,
) -> list[Row]:
    got = rounds({**ours, "floor": floor_op}, ops=ops, rounds=n_rounds, warmup=50)
    rows = []
    for label in ours:
        ratio = paired_ratio(got[label], got["floor"])
        rows.append(
            Row(
                case,
                f"{what}, {label}",
                rate(median(got[label])),
                "floor: " + rate(median(got["floor"])),
                f"{ratio:.2f}",
                ">= 0.80" if targets else "",
                met(ratio >= 0.8) if targets else "",
            )
        )
    return rows


def record(floor: Floor, conninfo: str, *, ops: int, n_rounds: int) -> list[Row]:
    """1. record_actum through chronica.services against the psycopg floor.

    On Django's default connection (no prepared statements), and on one with psycopg's
    own defaults, the floor's (the same Chronicarius rules, another alias). Then both
    again, and the floor, with commits that do not wait for the disk: what is left is
    chronica's own cost (client CPU, planning) against the floor's."""
    count = itertools.count()

    def recorder(using: str | None, chronicum_id: str) -> Callable[[], object]:
        if using is None:
            return lambda: services.record_actum(OWNER, human_message(chronicum_id, next(count)))
        chronicarius = Chronicarius(DjangoStore(using=using))
        return lambda: chronicarius.record_actum(OWNER, human_message(chronicum_id, next(count)))

    def floor_op(floor: Floor, chronicum_id: str) -> Callable[[], object]:
        def op() -> object:
            content = f"table for four at eight? ({next(count)})"
            return floor.record(OWNER, chronicum_id, "message", "human", "ardian", content)

        return op

    durable = {
        DEFAULTS: recorder(None, "bench-record-chronica"),
        PREPARED: recorder("prepared", "bench-record-prepared"),
    }
    rows = _against_floor(
        "1 record",
        "record_actum",
        durable,
        floor_op(floor, "bench-record-floor"),
        ops=ops,
        n_rounds=n_rounds,
    )
    nowait = {
        f"{DEFAULTS}, {NOWAIT}": recorder("nowait", "bench-record-nowait"),
        f"{PREPARED}, {NOWAIT}": recorder("prepared-nowait", "bench-record-prepared-nowait"),
    }
    floor_nowait = Floor(conninfo, options=settings.NOWAIT)
    try:
        rows += _against_floor(
            "1 record",
            "record_actum",
            nowait,
            floor_op(floor_nowait, "bench-record-floor-nowait"),
            ops=ops,
            n_rounds=n_rounds,
            targets=False,  # a diagnosis: the target is on what a project runs, durable commits
        )
    finally:
        floor_nowait.close()
    return rows


def window(floor: Floor, *, ops: int, n_rounds: int) -> list[Row]:
    """2. get_acta(last_n=20, kinds=[message]) on 10,000 acta against both floors: the
    one query (owner joined), and two prepared statements (the owner's row, then the
    newest 20; issue 23). The targets are against the faster of the two."""
    ours = [
        (a.id, a.content, a.at, a.call_id, a.data)
        for a in services.get_acta(OWNER, "bench-10k", last_n=20, kinds=["message"])
    ]
    for form in (floor.window, floor.window_two):
        theirs = [
            (row[0], row[4], row[5], row[6], row[7])
            for row in form(OWNER, "bench-10k", ["message"], 20)
        ]
        if ours != theirs or len(ours) != 20:
            raise SystemExit("a floor and chronica disagree on the window: the floor is wrong")
    prepared = Chronicarius(DjangoStore(using="prepared"))

    def chronica_op() -> object:
        return services.get_acta(OWNER, "bench-10k", last_n=20, kinds=[ActumKind.MESSAGE])

    def prepared_op() -> object:
        return prepared.get_acta(OWNER, "bench-10k", last_n=20, kinds=[ActumKind.MESSAGE])

    floors: dict[str, Callable[[], object]] = {
        "one query": lambda: floor.window(OWNER, "bench-10k", ["message"], 20),
        "two prepared statements": lambda: floor.window_two(OWNER, "bench-10k", ["message"], 20),
    }
    ours_ops = {DEFAULTS: chronica_op, PREPARED: prepared_op}
    got = rounds({**ours_ops, **floors}, ops=ops, rounds=n_rounds, warmup=50)
    faster = max(floors, key=lambda label: median(got[label]))
    rows = []
    for label in ours_ops:
        for name in floors:
            ratio = paired_ratio(got[label], got[name])
            target = (1.0 if label == PREPARED else 0.8) if name == faster else None
            rows.append(
                Row(
                    "2 window",
                    f"get_acta(last_n=20, kinds=[message]) on 10k, {label}",
                    rate(median(got[label])),
                    f"floor, {name}: " + rate(median(got[name])),
                    f"{ratio:.2f}",
                    f">= {target:.2f}" if target else "",
                    met(ratio >= target) if target else "",
                )
            )
    return rows


def growth(*, ops: int, n_rounds: int) -> tuple[list[Row], str]:
    """3. get_acta(last_n=20) latency on 1k, 100k and 1M acta, and the plan on 1M."""
    sizes = {"1k": "bench-1k", "100k": "bench-100k", "1M": "bench-1m"}
    sides: dict[str, Callable[[], object]] = {
        label: (lambda cid=cid: services.get_acta(OWNER, cid, last_n=20))
        for label, cid in sizes.items()
    }
    got = rounds(sides, ops=ops, rounds=n_rounds, warmup=50)
    rows = [
        Row(
            "3 growth",
            f"get_acta(last_n=20), {label} acta",
            f"{1e6 / median(got[label]):.0f} µs",
            "" if label == "1k" else f"1k: {1e6 / median(got['1k']):.0f} µs",
        )
        for label in sizes
    ]
    ratio = paired_ratio(got["1k"], got["1M"])  # latency 1M / latency 1k
    # The plan of the very statement get_acta sends, as auto_explain logs it (it also
    # logged the statements inside a PL/pgSQL function, when the window was one).
    plan = explained(lambda: services.get_acta(OWNER, "bench-1m", last_n=20))
    uses_index = "acta_chronicum_seq" in plan
    rows.append(
        Row(
            "3 growth",
            "latency 1M / 1k",
            ratio=f"{ratio:.2f}",
            target="<= 1.30",
            met=met(ratio <= 1.3),
        )
    )
    rows.append(
        Row("3 growth", "window plan uses (chronicum_id, seq)", target="index", met=met(uses_index))
    )
    return rows, plan


def explained(call: Callable[[], object]) -> str:
    """The plans (ANALYZE, no timings) of every statement ``call`` runs on the default
    connection, nested ones (a function's) included, as auto_explain logs them."""
    messages: list[str] = []
    connection.ensure_connection()
    raw = connection.connection

    def collect(diagnostic: Any) -> None:
        messages.append(diagnostic.message_primary or "")

    raw.add_notice_handler(collect)
    try:
        with connection.cursor() as cursor:
            cursor.execute("LOAD 'auto_explain'")
            for setting in (
                "auto_explain.log_min_duration = 0",
                "auto_explain.log_nested_statements = on",
                "auto_explain.log_analyze = on",
                "auto_explain.log_timing = off",
                "client_min_messages = log",
            ):
                cursor.execute(f"SET {setting}")
        call()
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET client_min_messages = notice")
            cursor.execute("SET auto_explain.log_min_duration = -1")
        raw.remove_notice_handler(collect)
    return "\n\n".join(m.split("plan:", 1)[1].strip() for m in messages if "plan:" in m)


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
                services.record_actum(OWNER, human_message(cid, next(count)))

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
                rate(median(ours)),
                "floor: " + rate(median(theirs)),
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
            met=met(diff_mib <= 4),
        ),
        Row("5 memory", "control: get_acta() all of 100k acta", fmt(control)),
    ]


def estimate() -> list[Row]:
    """10. What chronica's default token counter costs a write: ``estimate_tokens`` on one
    actum, timed with timeit (it runs once per actum, in Python, before the write)."""
    import timeit

    from chronica.tokens import estimate_tokens

    message = human_message("dinner-friday", 1)
    samples = {
        f"a message of {len(message.content.encode())} B": message,
        "a message of 4 KiB": dataclasses.replace(message, content="table for four? " * 256),
        "a non-ASCII message of 4 KiB": dataclasses.replace(message, content="meja — ☺ " * 410),
        "a tool output item (data, 170 B of JSON)": Actum(
            chronicum_id="dinner-friday",
            kind=ActumKind.TOOL_RESPONSE,
            actor_kind=ActorKind.AGENT,
            actor="search",
            call_id="call-1",
            data={
                "type": "function_call_output",
                "call_id": "call-1",
                "output": '[{"name":"Rumah Teduh","table":true},'
                '{"name":"Kayu Manis","table":true}]',
            },
        ),
    }
    rows = []
    for label, actum in samples.items():
        timer = timeit.Timer(lambda actum=actum: estimate_tokens(actum))
        number, _ = timer.autorange()
        best = min(timer.repeat(repeat=5, number=number)) / number
        rows.append(Row("10 tokens", f"estimate_tokens, {label}", f"{best * 1e6:.2f} µs"))
    return rows
