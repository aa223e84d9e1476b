"""Search across an owner's sessions: ``search_acta`` on PostgreSQL and SQLite, the
write cost of the index, and ADK memory's recall against ADK's SqliteMemoryService.

``python -m benchmarks.search [--acta N] [--owners M] [--quick]``, or the ``search``
case of ``python -m benchmarks``. Each database runs in a process of its own (Django
is configured once a process): PostgreSQL on ``chronica_bench_search`` (next to the
benchmark database, never a test database), SQLite on a file under
``benchmarks/results``.

* 30, search latency: ``--acta`` acta (default 1,000,000) of ``--owners`` owners
  (default 1,000; ten chronica each), their text drawn from a 5,000-word vocabulary
  with Zipf's law, as talk is; then ``services.search_acta(owner, query)`` of a random
  owner, one or two words of middling frequency, p50 and p99. Targets: PostgreSQL p50
  <= 10 ms and p99 <= 50 ms, SQLite p50 <= 20 ms.
* 31, the write cost of the index: ``record_acta`` of one message, interleaved
  rounds on two databases alike but for the index (dropped on one). Target <= 1.15x.
* 32, recall: 2,000 ADK sessions of 20 users (eight events each), 200 of them with a
  planted fact; 200 questions, each answered by one planted event; recall@5 of
  ``ChronicaMemoryService`` and of ADK's ``SqliteMemoryService`` on the same events,
  and their search latencies. Targets: recall@5 at least ADK's, >= 10x faster.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
VOCABULARY = 5_000
SYLLABLES = [
    c + v for c in "bdfghjklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "ou")
]  # 112 syllables: two or three make a word


def vocabulary(n: int = VOCABULARY) -> list[str]:
    rng = random.Random(7)
    words: dict[str, None] = {}
    while len(words) < n:
        words["".join(rng.choice(SYLLABLES) for _ in range(rng.choice((2, 3))))] = None
    return list(words)


def sentence(rng: random.Random, words: list[str], length: int) -> str:
    # Zipf: rank r with probability ~ 1/r, by inverse transform of a log-uniform draw.
    n = len(words)
    return " ".join(words[min(int(n ** rng.random()) - 1, n - 1)] for _ in range(length))


# -- one database, in this process -----------------------------------------------------


def _setup(db: str) -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.settings"
    if db == "sqlite":
        os.environ["CHRONICA_BENCH_DB"] = "sqlite"
        os.environ.setdefault("CHRONICA_BENCH_SQLITE", str(RESULTS / "search.sqlite3"))
    else:
        os.environ.setdefault(
            "CHRONICA_BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432/chronica_bench_search"
        )
    import django

    django.setup()


def _migrate(db: str) -> None:
    from django.core.management import call_command

    if db == "postgres":
        from .database import ensure_database

        ensure_database()
    else:
        call_command("migrate", verbosity=0, interactive=False)


def _load(db: str, n_acta: int, n_owners: int) -> float:
    """The owners' acta, written straight into the tables (the index kept by the
    database as for any writer); the seconds it took."""
    from django.db import connection, transaction

    began = time.monotonic()
    words = vocabulary()
    rng = random.Random(11)
    per_chronicum = max(n_acta // (n_owners * 10), 1)
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM acta")
        cursor.execute("DELETE FROM chronica")
        if db == "postgres":
            cursor.execute("DROP INDEX IF EXISTS acta_search")
    now = "2026-06-01T12:00:00+00:00"
    chronica = [
        (f"s-{o:04d}-{c}", f"owner-{o:04d}", now, now) for o in range(n_owners) for c in range(10)
    ]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO chronica (id, owner_id, started_at, last_activity_at)"
            " VALUES (%s, %s, %s, %s)",
            chronica,
        )

    def rows() -> Any:
        for chronicum_id, _owner, _, _ in chronica:
            for i in range(per_chronicum):
                yield (
                    f"a{i}",
                    chronicum_id,
                    "message",
                    "human" if i % 2 == 0 else "agent",
                    "ardian" if i % 2 == 0 else "concierge",
                    sentence(rng, words, rng.randint(6, 24)),
                    now,
                )

    insert = (
        "INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s)"
    )
    if db == "postgres":
        import psycopg

        from .database import conninfo

        with psycopg.connect(conninfo(), autocommit=True) as conn:
            with conn.cursor().copy(
                "COPY acta (id, chronicum_id, kind, actor_kind, actor, content, at) FROM STDIN"
            ) as copy:
                for row in rows():
                    copy.write_row(row)
            from chronica.conf import chronica_settings
            from chronica.stores.db.search import vector

            conn.execute("SET maintenance_work_mem = '256MB'")
            conn.execute(
                "CREATE INDEX acta_search ON acta USING GIN"
                f" ({vector(chronica_settings.SEARCH_CONFIG)})"
            )
            conn.execute("VACUUM ANALYZE acta")
            conn.execute("VACUUM ANALYZE chronica")
    else:
        batch: list[tuple[Any, ...]] = []
        with transaction.atomic(), connection.cursor() as cursor:
            for row in rows():
                batch.append(row)
                if len(batch) == 10_000:
                    cursor.executemany(insert, batch)
                    batch = []
            cursor.executemany(insert, batch)
            cursor.execute("ANALYZE")
    return time.monotonic() - began


def _latency(n_owners: int, queries: int) -> dict[str, float]:
    """search_acta of a random owner, one or two words of middling frequency."""
    from chronica import services

    words = vocabulary()
    rng = random.Random(13)
    middling = words[20:600]
    times, found = [], 0
    for i in range(queries + 20):
        owner = f"owner-{rng.randrange(n_owners):04d}"
        query = " ".join(rng.sample(middling, 1 + i % 2))
        began = time.perf_counter()
        hits = services.search_acta(owner, query)
        elapsed = time.perf_counter() - began
        if i >= 20:  # the first ones warm the caches
            times.append(elapsed)
            found += len(hits)
    times.sort()
    return {
        "p50": statistics.median(times) * 1000,
        "p99": times[min(len(times) - 1, round(0.99 * len(times)))] * 1000,
        "hits": found / queries,
    }


def _write_cost(db: str, rounds: int, ops: int) -> dict[str, float]:
    """One-actum writes, interleaved rounds, with the index and without it (a second
    database alike but for the index)."""
    from django.db import connection, connections

    from chronica import Actum
    from chronica.services import Chronicarius
    from chronica.stores.db import DjangoStore

    from .timing import paired_ratio
    from .timing import rounds as interleaved

    alias = "noindex"
    settings = dict(connection.settings_dict)
    if db == "sqlite":
        settings["NAME"] = str(RESULTS / "search-noindex.sqlite3")
    else:
        import psycopg

        from .database import conninfo

        name = "chronica_bench_search_noindex"
        with psycopg.connect(conninfo("postgres"), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name}")
            conn.execute(f"CREATE DATABASE {name}")
        settings["NAME"] = name
    configured = connections.configure_settings({"default": settings, alias: settings})
    connections.settings[alias] = configured[alias]
    from django.core.management import call_command

    call_command("migrate", database=alias, verbosity=0, interactive=False)
    with connections[alias].cursor() as cursor:
        if db == "sqlite":
            for statement in (
                "DROP TRIGGER IF EXISTS acta_search_insert",
                "DROP TRIGGER IF EXISTS acta_search_update",
                "DROP TRIGGER IF EXISTS acta_search_delete",
                "DROP TABLE IF EXISTS acta_search",
            ):
                cursor.execute(statement)
        else:
            cursor.execute("DROP INDEX IF EXISTS acta_search")
    words, rng = vocabulary(), random.Random(17)
    sides = {}
    for name, store in (("with", DjangoStore()), ("without", DjangoStore(using=alias))):
        chronicarius = Chronicarius(store)

        def write(c: Chronicarius = chronicarius, side: str = name) -> None:
            c.record_acta(
                "writer",
                [
                    Actum(
                        chronicum_id=f"bench-writes-{side}",
                        kind="message",
                        actor_kind="human",
                        actor="ardian",
                        content=sentence(rng, words, 16),
                    )
                ],
            )

        sides[name] = write
    result = interleaved(sides, ops=ops, rounds=rounds, warmup=ops)
    return {
        "with": statistics.median(result["with"]),
        "without": statistics.median(result["without"]),
        "cost": paired_ratio(result["without"], result["with"]),
    }


def _recall(quick: bool) -> dict[str, float]:
    """2,000 ADK sessions of 20 users, 200 planted facts, 200 questions: recall@5 and
    search latency of ChronicaMemoryService and of ADK's SqliteMemoryService."""
    import asyncio

    from google.adk.events.event import Event
    from google.adk.memory._sqlite_memory_service import SqliteMemoryService
    from google.genai import types

    from chronica import services
    from chronica.integrations.google_adk import (
        ChronicaMemoryService,
        ChronicaSessionService,
        actum_of,
    )

    app, users, n_sessions, per_session = "recall", 20, 2000, 8
    if quick:
        n_sessions = 400
    words, rng = vocabulary(), random.Random(19)
    places = words[3000:3400]
    things = words[3400:3800]
    facts, questions = [], []
    for k in range(200 if not quick else 40):
        place, thing = places[k], things[k]
        code = f"{rng.randrange(1000, 9999)}"
        facts.append(f"The {thing} code at {place} is {code}, remember it")
        questions.append((f"what was the {thing} code at {place}?", k))
    sessions_service, ours = ChronicaSessionService(), ChronicaMemoryService(max_results=5)
    sqlite_path = RESULTS / "adk-memory.sqlite3"
    sqlite_path.unlink(missing_ok=True)
    theirs = SqliteMemoryService(str(sqlite_path), max_results=5)
    planted: dict[int, tuple[str, str]] = {}

    from django.db import connection

    with connection.cursor() as cursor:  # an earlier run's sessions (--no-load)
        cursor.execute(f"DELETE FROM acta WHERE chronicum_id LIKE 'adk:{app}:%'")
        cursor.execute(f"DELETE FROM chronica WHERE id LIKE 'adk:{app}:%'")

    async def load() -> None:
        for s in range(n_sessions):
            user = f"user-{s % users:02d}"
            session = await sessions_service.create_session(
                app_name=app, user_id=user, session_id=f"r-{s}"
            )
            events = []
            for i in range(per_session):
                text = sentence(rng, words, rng.randint(6, 20))
                fact = s < len(facts) and i == 3
                if fact:
                    text = facts[s]
                events.append(
                    Event(
                        id=f"e-{s}-{i}",
                        invocation_id=f"inv-{s}",
                        author="user" if i % 2 == 0 else "concierge",
                        timestamp=1_750_000_000 + s * 10 + i,
                        content=types.Content(
                            role="user" if i % 2 == 0 else "model",
                            parts=[types.Part(text=text)],
                        ),
                    )
                )
                if fact:
                    planted[s] = (user, f"e-{s}-{i}")
            chronicum = sessions_service.chronicum_of(app, user, session.id)
            await services.arecord_acta(user, [actum_of(e, chronicum, user) for e in events])
            session.events.extend(events)
            await theirs.add_session_to_memory(session)

    async def measure(service: Any) -> tuple[float, float]:
        found, times = 0, []
        for question, k in questions:
            user, event_id = planted[k]
            began = time.perf_counter()
            answer = await service.search_memory(app_name=app, user_id=user, query=question)
            times.append(time.perf_counter() - began)
            # (ADK's SqliteMemoryService gives its row ID as the memory's; the event's
            # ID is in custom_metadata)
            ids = [m.custom_metadata.get("event_id", m.id) for m in answer.memories[:5]]
            found += event_id in ids
        return found / len(questions), statistics.median(times) * 1000

    async def run() -> dict[str, float]:
        await load()
        for _ in range(2):  # warm both
            await measure(ours)
            await measure(theirs)
        recall_ours, ms_ours = await measure(ours)
        recall_theirs, ms_theirs = await measure(theirs)
        await theirs.close()
        return {
            "recall_ours": recall_ours,
            "recall_theirs": recall_theirs,
            "ms_ours": ms_ours,
            "ms_theirs": ms_theirs,
        }

    return asyncio.run(run())


def one_database(
    db: str, n_acta: int, n_owners: int, quick: bool, load: bool = True
) -> dict[str, Any]:
    _setup(db)
    _migrate(db)
    figures: dict[str, Any] = {"load_s": _load(db, n_acta, n_owners) if load else 0.0}
    figures.update(_latency(n_owners, 200 if quick else 1000))
    figures.update(_write_cost(db, 5 if quick else 21, 50))
    if db == "sqlite":
        figures.update(_recall(quick))
    return figures


# -- both, one process each -----------------------------------------------------------


def measure(
    *, acta: int = 1_000_000, owners: int = 1_000, quick: bool = False, load: bool = True
) -> list[Any]:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    import django

    django.setup()
    from .report import Row

    RESULTS.mkdir(exist_ok=True)
    found: dict[str, dict[str, Any]] = {}
    for db in ("postgres", "sqlite"):
        args = [sys.executable, "-m", "benchmarks.search", "--one", db]
        args += ["--acta", str(acta), "--owners", str(owners)] + (["--quick"] if quick else [])
        args += [] if load else ["--no-load"]
        done = subprocess.run(args, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"benchmarks.search on {db} failed:\n{done.stderr}")
        found[db] = json.loads(done.stdout.strip().splitlines()[-1])
        (RESULTS / f"search-{db}.json").write_text(json.dumps(found[db]) + "\n")
    pg, lite = found["postgres"], found["sqlite"]
    scale = f"{acta:,} acta of {owners:,} owners"

    def ms(value: float) -> str:
        return f"{value:.1f} ms"

    rows = [
        Row(
            "30 search PostgreSQL",
            f"search_acta p50 / p99, {scale}",
            f"{ms(pg['p50'])} / {ms(pg['p99'])}",
            "",
            "",
            "<= 10 / 50 ms",
            "yes" if pg["p50"] <= 10 and pg["p99"] <= 50 else "NO",
        ),
        Row(
            "30 search SQLite",
            f"search_acta p50 / p99, {scale}",
            f"{ms(lite['p50'])} / {ms(lite['p99'])}",
            "",
            "",
            "p50 <= 20 ms",
            "yes" if lite["p50"] <= 20 else "NO",
        ),
    ]
    for db, name in ((pg, "PostgreSQL"), (lite, "SQLite")):
        rows.append(
            Row(
                f"31 write cost {name}",
                "record_acta of one actum, with the index",
                f"{db['with']:,.0f} ops/s",
                f"{db['without']:,.0f} ops/s (no index)",
                f"{db['cost']:.2f}x",
                "<= 1.15x",
                "yes" if db["cost"] <= 1.15 else "NO",
            )
        )
    rows += [
        Row(
            "32 recall",
            "ADK memory recall@5, 200 planted facts in 2,000 sessions",
            f"{lite['recall_ours']:.2f}",
            f"{lite['recall_theirs']:.2f} (SqliteMemoryService)",
            "",
            ">= ADK's",
            "yes" if lite["recall_ours"] >= lite["recall_theirs"] else "NO",
        ),
        Row(
            "32 recall speed",
            "search_memory median",
            ms(lite["ms_ours"]),
            ms(lite["ms_theirs"]) + " (SqliteMemoryService)",
            f"{lite['ms_theirs'] / lite['ms_ours']:.1f}x",
            ">= 10x",
            "yes" if lite["ms_theirs"] >= 10 * lite["ms_ours"] else "NO",
        ),
    ]
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.search")
    parser.add_argument("--acta", type=int, default=1_000_000)
    parser.add_argument("--owners", type=int, default=1_000)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-load", action="store_true", help="reuse the loaded acta")
    parser.add_argument("--one", choices=("postgres", "sqlite"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        figures = one_database(args.one, args.acta, args.owners, args.quick, not args.no_load)
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / f"search-{args.one}.json").write_text(json.dumps(figures) + "\n")
        print(json.dumps(figures))
        return 0
    from .report import table

    rows = measure(acta=args.acta, owners=args.owners, quick=args.quick, load=not args.no_load)
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
