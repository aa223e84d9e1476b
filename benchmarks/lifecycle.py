"""8. Listing an owner's chronica among a million; 9. deleting a 100,000-actum chronicum,
and what it does to writers busy in other chronica meanwhile."""

from __future__ import annotations

import itertools
import statistics
import threading
import time
from collections.abc import Callable

import psycopg
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

from chronica import Chronicum, services

from .database import LISTED, LISTING_TOTAL, OWNER, add_chronicum, human_message
from .report import Row, met, us
from .timing import median, paired_ratio, percentile, rounds


def listing(*, ops: int, n_rounds: int) -> tuple[list[Row], str]:
    """A page of list_chronica for the owner of 10,000 chronica and for the owner of 10."""
    (big, n_big), (small, n_small) = LISTED.items()
    # The start of page 51 of 100: the 5,000th of the big owner's chronica.
    page: list[Chronicum] = []
    for _ in range(5):
        page = services.list_chronica(big, limit=1000, before=page[-1] if page else None)
    deep = page[-1]
    if len(services.list_chronica(small, limit=1000)) != n_small:
        raise SystemExit(f"{small} should have {n_small} chronica: load the data again")

    sides: dict[str, Callable[[], object]] = {
        "big10": lambda: services.list_chronica(big, limit=10),
        "small10": lambda: services.list_chronica(small, limit=10),
        "big100": lambda: services.list_chronica(big),
        "small100": lambda: services.list_chronica(small),
        "deep": lambda: services.list_chronica(big, before=deep),
        "deep_id": lambda: services.list_chronica(big, before=deep.id),
    }
    got = rounds(sides, ops=ops, rounds=n_rounds, warmup=50)
    among = f"among {LISTING_TOTAL / 1e6:.0f}M"
    ratio10 = paired_ratio(got["small10"], got["big10"])
    ratio100 = paired_ratio(got["small100"], got["big100"])
    with CaptureQueriesContext(connection) as sent:
        services.list_chronica(big, before=deep)
    with connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) "
            + sent.captured_queries[-1]["sql"]
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    return [
        Row(
            "8 listing",
            f"list_chronica(limit=10), owner of {n_big:,} {among}, 10 rows each",
            us(median(got["big10"])),
            f"owner of {n_small}: {us(median(got['small10']))}",
            f"{ratio10:.2f}",
            "<= 1.30",
            met(ratio10 <= 1.3),
        ),
        Row(
            "8 listing",
            f"list_chronica() first page (100 rows; the owner of {n_small} gets {n_small})",
            us(median(got["big100"])),
            f"owner of {n_small}: {us(median(got['small100']))}",
            f"{ratio100:.2f}",
        ),
        Row(
            "8 listing",
            "list_chronica(before=<Chronicum>), page 51 of 100",
            us(median(got["deep"])),
            f"page 1: {us(median(got['big100']))}",
            f"{paired_ratio(got['big100'], got['deep']):.2f}",
        ),
        Row(
            "8 listing",
            "list_chronica(before=<ID>), page 51 of 100",
            us(median(got["deep_id"])),
            f"page 1: {us(median(got['big100']))}",
            f"{paired_ratio(got['big100'], got['deep_id']):.2f}",
        ),
        Row(
            "8 listing",
            "listing plan uses (owner_id, -last_activity_at, id)",
            target="index",
            met=met("chronica_owner_activity" in plan and "Sort" not in plan),
        ),
    ], plan


def _delete_once(
    conninfo: str, victim: str, *, writers: int, size: int, before_s: float
) -> tuple[float, list[float], list[float]]:
    """One delete of a fresh ``size``-acta chronicum amid ``writers`` busy writers: its
    time, and the writers' latencies before it and during it."""
    count = itertools.count()
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("DELETE FROM acta WHERE chronicum_id = %s", [victim])
        conn.execute("DELETE FROM chronica WHERE id = %s", [victim])
        add_chronicum(conn, victim, size)
        conn.execute("CHECKPOINT")  # the load's dirty pages are not the delete's to write
    stop = threading.Event()
    ready = threading.Barrier(writers + 1)
    spans: list[list[tuple[float, float]]] = [[] for _ in range(writers)]
    failures: list[BaseException] = []

    def write(i: int) -> None:
        try:
            connection.ensure_connection()
            ready.wait()
            while not stop.is_set():
                start = time.perf_counter()
                services.record_actum(OWNER, human_message(f"bench-conc-{i}", next(count)))
                spans[i].append((start, time.perf_counter()))
        except BaseException as error:  # reported below: a benchmark thread must not hang
            failures.append(error)
            raise
        finally:
            connections.close_all()

    pool = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
    for t in pool:
        t.start()
    ready.wait()
    time.sleep(before_s)
    began = time.perf_counter()
    services.delete_chronicum(OWNER, victim)
    ended = time.perf_counter()
    time.sleep(0.3)
    stop.set()
    for t in pool:
        t.join()
    if failures:
        raise SystemExit(f"a writer failed during the delete: {failures[0]!r}")
    before: list[float] = []
    during: list[float] = []
    for start, end in itertools.chain.from_iterable(spans):
        if began - before_s + 0.5 <= start and end < began:  # after a half-second warm-up
            before.append(end - start)
        elif start < ended and end > began:  # overlaps the delete
            during.append(end - start)
    return ended - began, before, during


def delete(
    conninfo: str, *, reps: int, writers: int = 4, size: int = 100_000, before_s: float = 2.0
) -> list[Row]:
    """Time ``delete_chronicum`` on a chronicum of ``size`` acta while ``writers`` threads
    record into their own chronica; compare their latency during the delete with the
    ``before_s`` seconds before it."""
    deletes: list[float] = []
    lat_before: list[float] = []
    lat_during: list[float] = []
    for rep in range(reps):
        took, before, during = _delete_once(
            conninfo, f"bench-delete-{rep}", writers=writers, size=size, before_s=before_s
        )
        deletes.append(took)
        lat_before += before
        lat_during += during

    p99_before, p99_during = percentile(lat_before, 99), percentile(lat_during, 99)
    each = ", ".join(f"{d:.2f}" for d in deletes)
    return [
        Row(
            "9 delete",
            f"delete_chronicum, {size:,} acta ({reps} runs: {each} s)",
            f"{statistics.median(deletes):.2f} s",
        ),
        Row(
            "9 delete",
            f"record_actum p99, {writers} writers in other chronica, during the delete"
            f" ({len(lat_during):,} calls)",
            f"{p99_during * 1e3:.1f} ms",
            f"before: {p99_before * 1e3:.1f} ms ({len(lat_before):,} calls)",
            f"{p99_during / p99_before:.2f}",
        ),
        Row(
            "9 delete",
            f"record_actum median, {writers} writers, during the delete",
            f"{median(lat_during) * 1e3:.1f} ms",
            f"before: {median(lat_before) * 1e3:.1f} ms",
            f"{median(lat_during) / median(lat_before):.2f}",
        ),
    ]
