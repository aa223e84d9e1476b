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
import sys
import time
from pathlib import Path

from .database import machine
from .report import Row, table


def main(argv: list[str]) -> int:
    from .registry import CASES, Run

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
    only = [name for name in CASES if name in set(args.only.split(","))]
    if unknown := set(args.only.split(",")) - set(CASES):
        parser.error(f"unknown case(s) {sorted(unknown)}; known: {', '.join(CASES)}")

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    import django

    django.setup()
    from django.conf import settings

    began = time.monotonic()
    run = Run(quick=args.quick, load=not args.no_load)
    if getattr(settings, "BENCH_DB", "postgres") == "sqlite":
        from django.core.management import call_command

        on_sqlite = [name for name, case in CASES.items() if case.sqlite]
        if args.profile and not args.profile.startswith("http"):
            parser.error("on SQLite only --profile http-window|http-write")
        if not args.profile and args.only != ",".join(CASES) and set(only) - set(on_sqlite):
            parser.error(f"on SQLite only: {', '.join(on_sqlite)}")
        call_command("migrate", verbosity=0, interactive=False)
        if args.profile:
            from .profile import profile

            print(profile(args.profile))
            return 0
        rows = [row for name in only if name in on_sqlite for row in CASES[name].run(run)]
        return _report(argv, began, rows, run.plans)

    from . import cases
    from .database import conninfo, ensure_database, load
    from .floor import Floor

    name = ensure_database()
    if args.profile:
        from .profile import profile

        print(profile(args.profile))
        return 0
    if run.load:
        print(f"loading {sum(cases.SESSIONS.values()):,} filler acta into {name} ...", flush=True)
        load(cases.SESSIONS)
    run.conninfo = conninfo()
    rows = []
    run.floor = Floor(run.conninfo)
    try:
        for case in only:
            if not CASES[case].floor and run.floor is not None:
                run.floor.close()
                run.floor = None
            rows += CASES[case].run(run)
    finally:
        if run.floor is not None:
            run.floor.close()
    return _report(argv, began, rows, run.plans)


def _report(argv: list[str], began: float, rows: list[Row], plans: dict[str, str]) -> int:
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
