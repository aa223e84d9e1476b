"""OpenAI Agents SDK sessions: ChronicaSession against the SDK's own, on the same machine.

``python -m benchmarks.openai_agents [--quick] [--no-load]``

Three sessions hold the same items: ChronicaSession (chronica's DjangoStore on the
benchmark database), the SDK's ``SQLAlchemySession`` on the same PostgreSQL
database (psycopg driver, its own tables ``agent_sessions`` and ``agent_messages``)
and the SDK's ``SQLiteSession`` on a file. Each is filled through its own
``add_items`` with 100,000 items (20,000 five-item turns: the question, a reasoning
item, a function call, its output, the answer), then measured:

* ``get_items(limit=20)`` on the 100,000-item session;
* ``add_items`` of one five-item turn;
* the growth of ChronicaSession's ``get_items(limit=20)`` from 100 to 100,000 items.

All three are called the way an agent run calls them, from one asyncio loop, and
timed in interleaved rounds (:mod:`benchmarks.timing`); the ratios are medians of
round-by-round ratios. Targets: ChronicaSession at least as fast as SQLAlchemySession
(ratio >= 1.00) on both operations, and 100,000 items at most 1.3 times slower to read
than 100.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

LARGE, SMALL, TURN = 100_000, 100, 5
BIG_ID, SMALL_ID, WRITES_ID = "agents-100k", "agents-100", "agents-turns"
SQLITE_FILE = Path(tempfile.gettempdir()) / "chronica-bench-sqlite-session.sqlite3"


def turn(n: int) -> list[dict[str, Any]]:
    """Five items of one agent turn, about the sizes a real run writes."""
    call_id = f"call_{n:08d}"
    return [
        {"role": "user", "content": f"Is there a quiet table for four on Friday? ({n})"},
        {
            "type": "reasoning",
            "id": f"rs_{n:08d}",
            "summary": [{"type": "summary_text", "text": "Search first, then book."}],
            "encrypted_content": "gAAAAAB" + "x" * 200,
        },
        {
            "type": "function_call",
            "id": f"fc_{n:08d}",
            "call_id": call_id,
            "name": "search",
            "arguments": '{"area":"Kemang","party":4,"quiet":true}',
            "status": "completed",
        },
        {
            "type": "function_call_output",
            "call_id": call_id,
            "output": '[{"name":"Rumah Teduh","table":true},{"name":"Kayu Manis","table":true}]',
        },
        {
            "type": "message",
            "id": f"msg_{n:08d}",
            "role": "assistant",
            "status": "completed",
            "content": [
                {
                    "type": "output_text",
                    "text": "Rumah Teduh and Kayu Manis both have a quiet table for four at 7pm.",
                    "annotations": [],
                    "logprobs": [],
                }
            ],
        },
    ]


async def _fill(session: Any, items: int, batch: int = 1_000) -> None:
    await session.clear_session()
    turns = [item for n in range(items // TURN) for item in turn(n)]
    for start in range(0, len(turns), batch):
        await session.add_items(turns[start : start + batch])


def run(*, quick: bool = False, load: bool = True) -> list[Any]:
    """Load (unless ``load`` is false), measure, and return the rows of the table."""
    from agents import SQLiteSession
    from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession

    from chronica.integrations.openai_agents import ChronicaSession

    from .database import OWNER, sqlalchemy_url
    from .report import Row, met, rate
    from .timing import median, paired_ratio, rounds

    loop = asyncio.new_event_loop()

    def sync(make: Callable[[], Awaitable[object]]) -> Callable[[], object]:
        return lambda: loop.run_until_complete(make())

    chronica = {
        name: ChronicaSession(name, owner_id=OWNER) for name in (BIG_ID, SMALL_ID, WRITES_ID)
    }
    alchemy = {
        name: SQLAlchemySession.from_url(name, url=sqlalchemy_url(), create_tables=True)
        for name in (BIG_ID, WRITES_ID)
    }
    sqlite = {name: SQLiteSession(name, SQLITE_FILE) for name in (BIG_ID, WRITES_ID)}
    try:
        if load:
            began = time.monotonic()
            print(f"loading {LARGE:,} items into each of the three sessions ...", flush=True)
            for fill in (
                _fill(chronica[BIG_ID], LARGE),
                _fill(chronica[SMALL_ID], SMALL),
                _fill(alchemy[BIG_ID], LARGE),
                _fill(sqlite[BIG_ID], LARGE),
            ):
                loop.run_until_complete(fill)
            print(f"loaded in {time.monotonic() - began:.0f} s", flush=True)
        for session in (chronica[WRITES_ID], alchemy[WRITES_ID], sqlite[WRITES_ID]):
            loop.run_until_complete(session.clear_session())
        # A read must return the same 20 items from all three, or the race means nothing.
        windows = [
            loop.run_until_complete(s[BIG_ID].get_items(limit=20))
            for s in (chronica, alchemy, sqlite)
        ]
        if not windows[0] == windows[1] == windows[2] or len(windows[0]) != 20:
            raise SystemExit("the three sessions disagree on the last 20 items: reload them")

        ops, n_rounds = (20, 5) if quick else (50, 31)
        reads = rounds(
            {
                "chronica": sync(lambda: chronica[BIG_ID].get_items(limit=20)),
                "sqlalchemy": sync(lambda: alchemy[BIG_ID].get_items(limit=20)),
                "sqlite": sync(lambda: sqlite[BIG_ID].get_items(limit=20)),
            },
            ops=ops,
            rounds=n_rounds,
            warmup=20,
        )
        count = iter(range(10**9))
        writes = rounds(
            {
                "chronica": sync(lambda: chronica[WRITES_ID].add_items(turn(next(count)))),
                "sqlalchemy": sync(lambda: alchemy[WRITES_ID].add_items(turn(next(count)))),
                "sqlite": sync(lambda: sqlite[WRITES_ID].add_items(turn(next(count)))),
            },
            ops=ops,
            rounds=n_rounds,
            warmup=20,
        )
        growth = rounds(
            {
                "100": sync(lambda: chronica[SMALL_ID].get_items(limit=20)),
                "100k": sync(lambda: chronica[BIG_ID].get_items(limit=20)),
            },
            ops=ops,
            rounds=n_rounds,
            warmup=20,
        )
    finally:
        for session in alchemy.values():
            loop.run_until_complete(session.engine.dispose())
        for session in sqlite.values():
            session.close()
        loop.close()

    case = "11 openai-agents"
    rows = []
    for what, got in (
        ("get_items(limit=20) on 100k items", reads),
        ("add_items, 5-item turn", writes),
    ):
        for other, label in (
            ("sqlalchemy", "SQLAlchemySession, PostgreSQL"),
            ("sqlite", "SQLiteSession, file"),
        ):
            ratio = paired_ratio(got["chronica"], got[other])
            target = ">= 1.00" if other == "sqlalchemy" else ""
            rows.append(
                Row(
                    case,
                    f"{what}, vs {label}",
                    rate(median(got["chronica"])),
                    rate(median(got[other])),
                    f"{ratio:.2f}",
                    target,
                    met(ratio >= 1.0) if target else "",
                )
            )
    for size in ("100", "100k"):
        latency = 1e6 / median(growth[size])
        rows.append(
            Row(case, f"ChronicaSession get_items(limit=20), {size} items", f"{latency:.0f} µs")
        )
    ratio = paired_ratio(growth["100"], growth["100k"])  # latency 100k / latency 100
    rows.append(
        Row(
            case,
            "latency 100k / 100 items",
            ratio=f"{ratio:.2f}",
            target="<= 1.30",
            met=met(ratio <= 1.3),
        )
    )
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.openai_agents")
    parser.add_argument("--quick", action="store_true", help="fewer rounds, for trying things")
    parser.add_argument("--no-load", action="store_true", help="reuse the loaded sessions")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    import django

    django.setup()
    from .database import ensure_database, machine
    from .report import table

    began = time.monotonic()
    name = ensure_database()
    rows = run(quick=args.quick, load=not args.no_load)
    print(f"openai-agents sessions on {name}, {time.monotonic() - began:.0f} s")
    print(f"machine: {machine()}")
    print("the floor column is the SDK's session named in the measure\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
