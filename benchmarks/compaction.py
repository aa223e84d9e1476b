"""Compaction and fork (issue 36): the compacted window on a 100,000-actum session with 50
compactions against the plain window; ``compact`` of 200 acta against ``record_acta`` of
the same; ``fork_chronicum`` of 10,000 acta, its time and its statements.

Its own chronica (made again on every run, ``--no-load`` or not): the filler goes in by
SQL between the compactions, which go through ``services.compact``.
"""

from __future__ import annotations

import time

import psycopg
from django.db import connection
from django.test.utils import CaptureQueriesContext

from chronica import ActorKind, Actum, ActumKind, services

from .database import OWNER, conninfo
from .report import Row, met
from .timing import median, paired_ratio, rounds

LONG = "bench-compacted"
SHORT = "bench-compact-200"
PLAIN = "bench-record-200"
SOURCE = "bench-fork-source"
NEAR = "bench-compacted-near"
TOTAL, COMPACTIONS, FORKED = 100_000, 50, 10_000

_FILL = """
INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at, call_id, tokens)
SELECT md5(%(id)s || ':' || g), %(id)s,
       (ARRAY['message', 'thought', 'tool_request', 'tool_response'])[1 + g %% 4],
       (ARRAY['human', 'agent', 'agent', 'system'])[1 + g %% 4],
       (ARRAY['ardian', 'booking', 'booking', 'planner'])[1 + g %% 4],
       'dinner on friday, turn ' || g || ': ' || repeat('table for four at eight? ', 8),
       now(), CASE WHEN g %% 4 >= 2 THEN 'call-' || (g / 4) ELSE '' END, 40
FROM generate_series(%(start)s::bigint, %(end)s::bigint) AS g
"""


def _summary(chronicum_id: str, n: int) -> Actum:
    return Actum(
        chronicum_id=chronicum_id,
        kind=ActumKind.THOUGHT,
        actor_kind=ActorKind.AGENT,
        actor="concierge",
        content=f"summary {n}: ardian wants a quiet table for four on Friday at 8pm. " * 4,
    )


def _messages(chronicum_id: str, n: int) -> list[Actum]:
    return [
        Actum(
            chronicum_id=chronicum_id,
            kind=ActumKind.MESSAGE,
            actor_kind=ActorKind.HUMAN,
            actor="ardian",
            content=f"table for four at eight? ({i})",
        )
        for i in range(n)
    ]


def load() -> None:
    """The long session: 50 chunks of 2,000 filler acta, each compacted through its last
    actum by a two-actum summary, then 1,000 more acta (one turn in four a message)."""
    with psycopg.connect(conninfo(), autocommit=True) as conn:
        for chronicum_id in (LONG, SHORT, PLAIN, SOURCE, NEAR):
            conn.execute("DELETE FROM acta WHERE chronicum_id = %s", [chronicum_id])
            conn.execute("DELETE FROM chronica WHERE id LIKE %s", [chronicum_id + "%"])
            conn.execute(
                "INSERT INTO chronica (id, owner_id, started_at, last_activity_at)"
                " VALUES (%s, %s, now(), now())",
                [chronicum_id, OWNER],
            )
        conn.execute("DELETE FROM acta WHERE chronicum_id LIKE 'bench-fork-copy-%%'")
        conn.execute("DELETE FROM chronica WHERE id LIKE 'bench-fork-copy-%%'")
        chunk = (TOTAL - 1_000) // COMPACTIONS
        for n in range(COMPACTIONS):
            start, end = n * chunk + 1, (n + 1) * chunk
            conn.execute(_FILL, {"id": LONG, "start": start, "end": end})
            through = conn.execute(
                "SELECT id FROM acta WHERE chronicum_id = %s ORDER BY seq DESC LIMIT 1", [LONG]
            ).fetchone()
            assert through is not None
            services.compact(OWNER, LONG, [_summary(LONG, n)] * 2, through=through[0])
        conn.execute(_FILL, {"id": LONG, "start": TOTAL - 999, "end": TOTAL})
        conn.execute(_FILL, {"id": SOURCE, "start": 1, "end": FORKED})
        # A window that reaches its compaction: 10,000 acta, compacted, then 5 more.
        conn.execute(_FILL, {"id": NEAR, "start": 1, "end": 10_000})
        through = conn.execute(
            "SELECT id FROM acta WHERE chronicum_id = %s ORDER BY seq DESC LIMIT 1", [NEAR]
        ).fetchone()
        assert through is not None
        services.compact(OWNER, NEAR, [_summary(NEAR, 0)] * 2, through=through[0])
        conn.execute(_FILL, {"id": NEAR, "start": 10_001, "end": 10_005})
        conn.execute("VACUUM ANALYZE acta")
    services.record_actum(OWNER, _messages(SHORT, 1)[0])


def run(*, quick: bool) -> list[Row]:
    load()
    ops, n_rounds = (50, 5) if quick else (100, 31)
    window = rounds(
        {
            "plain": lambda: services.get_acta(OWNER, LONG, last_n=20),
            "compacted": lambda: services.get_acta(OWNER, LONG, last_n=20, compacted=True),
            "near_plain": lambda: services.get_acta(OWNER, NEAR, last_n=20),
            "near": lambda: services.get_acta(OWNER, NEAR, last_n=20, compacted=True),
        },
        ops=ops,
        rounds=n_rounds,
        warmup=50,
    )
    assert len(services.get_acta(OWNER, LONG, last_n=20, compacted=True)) == 20
    through = services.get_acta(OWNER, SHORT)[0].id
    batch_short, batch_plain = _messages(SHORT, 200), _messages(PLAIN, 200)
    writes = rounds(
        {
            "compact": lambda: services.compact(OWNER, SHORT, batch_short, through=through),
            "record": lambda: services.record_acta(OWNER, batch_plain),
        },
        ops=5,
        rounds=5 if quick else 21,
        warmup=2,
    )
    forks: list[float] = []
    for n in range(3 if quick else 7):
        start = time.perf_counter()
        services.fork_chronicum(OWNER, SOURCE, new_id=f"bench-fork-copy-{n}")
        forks.append(time.perf_counter() - start)
    with CaptureQueriesContext(connection) as sent:
        services.fork_chronicum(OWNER, SOURCE, new_id="bench-fork-copy-counted")
    inserts = [
        q["sql"].split()[2] for q in sent.captured_queries if q["sql"].lstrip().startswith("INSERT")
    ]
    assert len(services.get_acta(OWNER, "bench-fork-copy-counted")) == FORKED
    window_ratio = paired_ratio(window["plain"], window["compacted"])
    near_ratio = paired_ratio(window["near_plain"], window["near"])
    write_ratio = paired_ratio(writes["record"], writes["compact"])
    fork_s = median(forks)
    return [
        Row(
            "30 compaction",
            f"get_acta(last_n=20, compacted=True), {TOTAL:,} acta, {COMPACTIONS} compactions",
            f"{1e6 / median(window['compacted']):,.0f} µs",
            f"plain window: {1e6 / median(window['plain']):,.0f} µs",
            f"{window_ratio:.2f}",
            "<= 1.30",
            met(window_ratio <= 1.3),
        ),
        Row(
            "30 compaction",
            "the same, a window that reaches the compaction (7 acta in the view)",
            f"{1e6 / median(window['near']):,.0f} µs",
            f"plain window: {1e6 / median(window['near_plain']):,.0f} µs",
            f"{near_ratio:.2f}",
        ),
        Row(
            "30 compaction",
            "compact() of 200 acta",
            f"{1e3 / median(writes['compact']):,.1f} ms",
            f"record_acta of 200: {1e3 / median(writes['record']):,.1f} ms",
            f"{write_ratio:.2f}",
            "<= 2.00",
            met(write_ratio <= 2.0),
        ),
        Row(
            "30 compaction",
            f"fork_chronicum() of {FORKED:,} acta ({len(inserts)} INSERTs: {', '.join(inserts)})",
            f"{fork_s * 1e3:,.0f} ms",
            "",
            "",
            "< 500 ms, one statement a table",
            met(fork_s < 0.5 and sorted(inserts) == ["acta", "chronica"]),
        ),
    ]
