"""21. Forgetting: a redaction next to a write; the erasure of an owner of 100,000 acta
over 1,000 chronica, and the p99 of other owners' writers meanwhile; retention's
batches over a million acta, and the longest a batch holds its locks.

Its own rows (owners ``forget-*``), loaded with SQL at the start: the case needs none
of the filler the other cases load (``--only forgetting --no-load``)."""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from django.db import connection, connections

from chronica import services

from .database import human_message
from .report import Row, met
from .timing import median, paired_ratio, percentile, rounds


def _load_owner(owner: str, chronica: int, per: int, *, days_old: int = 0) -> None:
    """``chronica`` chronica of ``owner`` with ``per`` acta each, written by SQL."""
    prefix = f"{owner}-"
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO chronica (id, owner_id, started_at, last_activity_at)"
            " SELECT %s || g, %s, now() - make_interval(days => %s),"
            " now() - make_interval(days => %s) FROM generate_series(1, %s) g",
            [prefix, owner, days_old, days_old, chronica],
        )
        cursor.execute(
            "INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at,"
            " call_id, data, tokens)"
            " SELECT md5(g::text || %s), %s || (1 + (g - 1) / %s), 'tool_response', 'agent',"
            " 'search', 'a result of the search, row ' || g, now() - make_interval(days => %s),"
            " 'c' || g, '{\"rows\": [1, 2, 3]}'::jsonb, 12"
            " FROM generate_series(1, %s) g",
            [owner, prefix, per, days_old, chronica * per],
        )


def _write_latencies(
    owners: list[str], stop: threading.Event, out: list[float], started: threading.Barrier
) -> Callable[[int], None]:
    def writer(i: int) -> None:
        owner = owners[i]
        n = 0
        try:
            started.wait(30)
            while not stop.is_set():
                n += 1
                begin = time.perf_counter()
                services.record_actum(owner, human_message(f"{owner}-live", n))
                out.append(time.perf_counter() - begin)
        finally:
            connections.close_all()

    return writer


def _writers_during(
    work: Callable[[], Any], seconds: float | None, threads: int = 4
) -> tuple[Any, list[float]]:
    """Other owners' writers, ``threads`` of them, busy while ``work`` runs (or for
    ``seconds`` when ``work`` is None): its answer and their latencies."""
    owners = [f"forget-writer-{secrets.token_hex(3)}" for _ in range(threads)]
    stop = threading.Event()
    latencies: list[float] = []
    started = threading.Barrier(threads + 1)
    writer = _write_latencies(owners, stop, latencies, started)
    running = [threading.Thread(target=writer, args=(i,)) for i in range(threads)]
    for thread in running:
        thread.start()
    started.wait(30)
    time.sleep(0.3)  # the writers under way
    latencies.clear()
    try:
        answer = work() if seconds is None else time.sleep(seconds)
    finally:
        stop.set()
        for thread in running:
            thread.join(30)
    return answer, latencies


def forgetting(*, ops: int, n_rounds: int, quick: bool = False) -> list[Row]:
    rows: list[Row] = []
    # -- redact vs write ------------------------------------------------------------
    owner = f"forget-{secrets.token_hex(4)}"
    cid = f"{owner}-r"
    needed = ops * n_rounds + 200
    ids = [
        a.id
        for _ in range(0, needed, 500)
        for a in services.record_acta(owner, [human_message(cid, n) for n in range(500)])
    ]
    next_id = iter(ids)
    counter = iter(range(10**9))
    sides = {
        "write": lambda: services.record_actum(owner, human_message(cid, next(counter))),
        "redact": lambda: services.redact_actum(owner, cid, next(next_id), reason="bench"),
    }
    got = rounds(sides, ops=ops, rounds=n_rounds, warmup=50)
    ratio = paired_ratio(got["write"], got["redact"])  # redact time / write time
    rows.append(
        Row(
            "21 forgetting",
            "redact_actum (one statement, owner checked) vs record_actum",
            f"{1e6 / median(got['redact']):,.0f} µs",
            f"write: {1e6 / median(got['write']):,.0f} µs",
            f"{ratio:.2f}",
            "<= 2",
            met(ratio <= 2),
        )
    )
    # -- erase an owner of 100,000 acta over 1,000 chronica ------------------------
    leaving = f"forget-leaving-{secrets.token_hex(4)}"
    _load_owner(leaving, 1000, 100)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE chronica; ANALYZE acta")
    _, baseline = _writers_during(lambda: None, 3.0)
    began = time.perf_counter()
    erasure, during = _writers_during(lambda: services.erase_owner(leaving), None)
    took = time.perf_counter() - began
    assert erasure.counts["acta"] == 100_000, erasure.counts
    p99, p99_base = percentile(during, 99), percentile(baseline, 99)
    rows.append(
        Row(
            "21 forgetting",
            "erase_owner: 100,000 acta over 1,000 chronica, 4 writers of other owners busy",
            f"{took:.2f} s",
            "",
            "",
            "<= 5 s",
            met(took <= 5),
        )
    )
    rows.append(
        Row(
            "21 forgetting",
            "other owners' write p99 during that erasure",
            f"{p99 * 1e3:.1f} ms",
            f"without it: {p99_base * 1e3:.1f} ms",
            f"{p99 / p99_base:.2f}",
            "<= 3",
            met(p99 / p99_base <= 3),
        )
    )
    # -- retention over a million acta ---------------------------------------------
    from chronica.stores.db import forgetting as sql

    total = 200_000 if quick else 1_000_000
    old = f"forget-old-{secrets.token_hex(4)}"
    _load_owner(old, total // 1000, 1000, days_old=400)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE chronica; ANALYZE acta")
    held: list[float] = []
    inner = sql._in_transaction

    def timed(conn: Any, work: Callable[[], Any]) -> Any:
        begin = time.perf_counter()
        try:
            return inner(conn, work)
        finally:
            held.append(time.perf_counter() - begin)

    sql._in_transaction = timed  # type: ignore[assignment]
    try:
        began = time.perf_counter()
        done = services.apply_retention(
            rules=[{"older_than": "300d", "kinds": ["tool_response"], "action": "redact"}]
        )
        took = time.perf_counter() - began
    finally:
        sql._in_transaction = inner  # type: ignore[assignment]
    redacted = sum(c.get("acta", 0) for c in done.values())
    longest = max(held)
    rows.append(
        Row(
            "21 forgetting",
            f"retention redact over {total:,} old acta: {len(held)} batches, {redacted:,}"
            f" redacted in {took:.1f} s; the longest batch (its locks held)",
            f"{longest * 1e3:.0f} ms",
            f"p99 batch: {percentile(held, 99) * 1e3:.0f} ms",
            "",
            "<= 100 ms",
            met(longest <= 0.1),
        )
    )
    return rows
