"""``make bench``: load the benchmark database, run the measures, print the table.

``python -m benchmarks [--only record,window,...] [--no-load] [--quick]``
``python -m benchmarks --profile record|window|batch|budget|http-window|http-write``
(after one run has loaded the data)
``CHRONICA_BENCH_DB=sqlite python -m benchmarks`` runs the cases that need no PostgreSQL
(http, tokens) on a SQLite file.
The table also goes to benchmarks/results/latest.md (not committed; BENCHMARKS.md is).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sys
import time
from pathlib import Path

CASES = (
    "record",
    "window",
    "growth",
    "concurrency",
    "memory",
    "batch",
    "budget",
    "langchain",
    "listing",
    "delete",
    "tokens",
    "agents",
    "pydantic-ai",
    "asyncio",
    "follow",
    "follow-scale",
    "google-adk",
    "attack",
    "attested",
    "http",
    "langgraph",
)
# What runs on SQLite (CHRONICA_BENCH_DB=sqlite): the rest loads and compares with psycopg.
SQLITE_CASES = ("http", "tokens")


def machine() -> str:
    """One line naming the machine the figures came from."""
    import django
    import psycopg
    from django.conf import settings

    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next(line.split(":", 1)[1].strip() for line in info if "model name" in line)
    except (OSError, StopIteration):
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    db = settings.DATABASES["default"]
    if getattr(settings, "BENCH_DB", "postgres") == "sqlite":
        import sqlite3

        database = f"SQLite {sqlite3.sqlite_version} ({db['NAME']})"
    else:
        from .database import server_version

        database = f"PostgreSQL {server_version()} on {db['HOST']}:{db['PORT']}"
    try:
        load = "load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
    except OSError:
        load = "load average ?"
    return (
        f"{cpu}, {os.cpu_count()} CPUs, {mem:.0f} GiB, {load}; {database};"
        f" Python {platform.python_version()}, Django {django.__version__},"
        f" psycopg {psycopg.__version__} ({psycopg.pq.__impl__})"
    )


def table(rows: list) -> str:  # type: ignore[type-arg]
    head = ("case", "measure", "chronica", "baseline", "ratio", "target", "met")
    lines = [head] + [
        (r.case, r.measure, r.chronica, r.baseline, r.ratio, r.target, r.met) for r in rows
    ]
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    out = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) + " |"
        for line in lines
    ]
    out.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--only", default=",".join(CASES), help="comma-separated cases")
    parser.add_argument("--no-load", action="store_true", help="reuse the loaded data")
    parser.add_argument("--quick", action="store_true", help="fewer rounds, for trying things")
    parser.add_argument(
        "--profile",
        choices=("record", "window", "batch", "budget", "http-window", "http-write"),
        help="instead of the table: pyinstrument's profile of chronica's side of one case",
    )
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    if unknown := only - set(CASES):
        parser.error(f"unknown case(s) {sorted(unknown)}; known: {', '.join(CASES)}")

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    import django

    django.setup()
    from django.conf import settings

    began = time.monotonic()
    if getattr(settings, "BENCH_DB", "postgres") == "sqlite":
        from django.core.management import call_command

        if args.profile and not args.profile.startswith("http"):
            parser.error("on SQLite only --profile http-window|http-write")
        if not args.profile and args.only != ",".join(CASES) and only - set(SQLITE_CASES):
            parser.error(f"on SQLite only: {', '.join(SQLITE_CASES)}")
        only &= set(SQLITE_CASES)
        call_command("migrate", verbosity=0, interactive=False)
        if args.profile:
            from .profile import profile

            print(profile(args.profile))
            return 0
        return _report(argv, began, _sqlite_rows(only, quick=args.quick), {})

    from . import cases
    from .database import conninfo, ensure_database, load
    from .floor import Floor

    name = ensure_database()
    if args.profile:
        from .profile import profile

        print(profile(args.profile))
        return 0
    if not args.no_load:
        print(f"loading {sum(cases.SESSIONS.values()):,} filler acta into {name} ...", flush=True)
        load(cases.SESSIONS)
    # Short rounds, many of them: a pair of rounds shares the noise of the moment.
    ops, n_rounds = (100, 5) if args.quick else (100, 61)
    rows, plans = [], {}
    floor = Floor(conninfo())
    try:
        if "record" in only:
            rows += cases.record(floor, conninfo(), ops=ops, n_rounds=n_rounds)
        if "window" in only:
            rows += cases.window(floor, ops=ops, n_rounds=n_rounds)
        if "batch" in only:
            from .batch import batch

            rows += batch(floor, conninfo(), ops=ops, n_rounds=n_rounds)
    finally:
        floor.close()
    if "growth" in only:
        grown, plans["window plan on the 1M session (last_n=20)"] = cases.growth(
            ops=ops, n_rounds=n_rounds
        )
        rows += grown
    if "budget" in only:
        from . import budget

        grown, plans["budgeted window plan on the 1M session (max_tokens=8000)"] = budget.growth(
            ops=ops, n_rounds=n_rounds
        )
        rows += grown
    if "langchain" in only:
        from . import budget

        rows += budget.langchain(n_rounds=5 if args.quick else 21)
    if "listing" in only:
        from .lifecycle import listing

        listed, plans["listing plan, page 51 of the owner of 10,000"] = listing(
            ops=ops, n_rounds=n_rounds
        )
        rows += listed
    if "concurrency" in only:
        rows += cases.concurrency(conninfo(), ops=150, reps=3 if args.quick else 5)
    if "delete" in only:
        from .lifecycle import delete

        rows += delete(conninfo(), reps=1 if args.quick else 3)
    if "memory" in only:
        rows += cases.memory()
    if "tokens" in only:
        rows += cases.estimate()
    if "agents" in only:
        from . import openai_agents

        rows += openai_agents.run(quick=args.quick, load=not args.no_load)
    if "pydantic-ai" in only:
        from . import pydantic_ai

        rows += pydantic_ai.measure(ops=ops, n_rounds=n_rounds, reload=not args.no_load)
    if "asyncio" in only:
        from .async_path import async_path

        rows += async_path(ops=ops, n_rounds=5 if args.quick else 11)
    if "follow" in only:
        from .follow import follow

        rows += follow()
    if "follow-scale" in only:
        from .follow_scale import follow_scale

        rows += follow_scale()
    if "google-adk" in only:
        from . import google_adk

        rows += google_adk.run(quick=args.quick, load=not args.no_load)
    if "attack" in only:
        from . import attack

        rows += attack.run()
    if "attested" in only:
        from .attested import attested

        rows += attested(ops=ops, n_rounds=n_rounds)
    if "http" in only:
        from . import http

        rows += http.run(quick=args.quick)
    if "langgraph" in only:
        from . import langgraph

        rows += langgraph.measure(quick=args.quick)
    return _report(argv, began, rows, plans)


def _sqlite_rows(only: set[str], *, quick: bool) -> list:  # type: ignore[type-arg]
    from . import cases

    rows = []
    if "tokens" in only:
        rows += cases.estimate()
    if "http" in only:
        from . import http

        rows += http.run(quick=quick)
    return rows


def _report(argv: list[str], began: float, rows: list, plans: dict[str, str]) -> int:  # type: ignore[type-arg]
    rows.sort(key=lambda row: int(row.case.split()[0]))
    report = [
        f"chronica benchmarks, {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC,"
        f" {time.monotonic() - began:.0f} s",
        f"machine: {machine()}",
        "command: make bench" + (f" ({' '.join(argv)})" if argv else ""),
        "",
        table(rows),
    ]
    for title, plan in plans.items():
        report += ["", f"{title}:", "", plan]
    text = "\n".join(report)
    print(text)
    results = Path(__file__).resolve().parent / "results"
    results.mkdir(exist_ok=True)
    (results / "latest.md").write_text(text + "\n")
    # The table reports; it does not gate: a noisy minute must not fail a make run.
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
