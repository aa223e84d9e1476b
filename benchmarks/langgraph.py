"""19. LangGraph: a 500-turn thread in ``ChronicaSaver`` against LangGraph's official
``PostgresSaver`` (langgraph-checkpoint-postgres) on the same PostgreSQL.

Both threads are written by the same graph (``MessagesState``, the default
``add_messages`` reducer, a scripted model: no network), one turn a person's message
and the model's answer. Then, in interleaved rounds: ``get_tuple`` of the newest
checkpoint, ``put`` of the next checkpoint (one more message), ``list`` of the thread's
newest 20 checkpoints and of all of them; and the bytes the thread takes on disk (its
rows as PostgreSQL stores them, ``pg_column_size``, TOAST compression included; for
chronica the thread's acta too).

``python -m benchmarks.langgraph [--turns 500] [--quick]`` on its own, or as the
``langgraph`` case of ``python -m benchmarks``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import sys
import time
import uuid
from typing import Any

from .timing import median, paired_ratio, rounds

OWNER = "ardian"
THREAD = "bench-langgraph-500"
WORDS = [
    "table",
    "four",
    "eight",
    "friday",
    "dinner",
    "Kemang",
    "rice",
    "chili",
    "garden",
    "quiet",
    "window",
    "booking",
    "vegetarian",
    "menu",
    "price",
    "deposit",
    "parking",
    "rain",
    "terrace",
    "birthday",
    "cake",
    "wine",
    "juice",
    "late",
    "early",
    "confirm",
    "change",
    "guests",
    "allergy",
    "peanuts",
    "fish",
    "spicy",
    "mild",
    "sambal",
    "tea",
]
_PG_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
_OUR_TABLES = (
    "chronica_langgraph_checkpoints",
    "chronica_langgraph_blobs",
    "chronica_langgraph_writes",
    "chronica_langgraph_messages",
)


def _text(rng: random.Random, n_words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n_words))


def _graph(checkpointer: Any) -> Any:
    from langchain_core.messages import AIMessage
    from langgraph.graph import START, MessagesState, StateGraph

    def model(state: MessagesState) -> dict[str, Any]:
        turn = len(state["messages"])
        rng = random.Random(turn)
        return {"messages": [AIMessage(content=_text(rng, 90), id=f"ai-{turn}", name="concierge")]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_edge(START, "model")
    return builder.compile(checkpointer=checkpointer)


def _converse(checkpointer: Any, turns: int, thread_id: str = THREAD) -> None:
    from langchain_core.messages import HumanMessage

    graph = _graph(checkpointer)
    config = {"configurable": {"thread_id": thread_id}}
    rng = random.Random(7)
    for turn in range(turns):
        message = HumanMessage(content=_text(rng, 25), id=f"human-{turn}")
        graph.invoke({"messages": [message]}, config)


def _row_bytes(cursor: Any, tables: tuple[str, ...], column: str, value: str) -> int:
    total = 0
    for table in tables:
        cursor.execute(
            f"SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM {table} t WHERE {column} = %s",
            [value],
        )
        total += int(cursor.fetchone()[0])
    return total


def _next_put(saver: Any, state: dict[str, Any]) -> None:
    """Put one more checkpoint after the newest, with one more message."""
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.base.id import uuid6

    latest = state["latest"]
    checkpoint = dict(latest.checkpoint)
    values = dict(checkpoint["channel_values"])
    state["n"] += 1
    values["messages"] = [
        *values["messages"],
        HumanMessage(content=f"one more, {state['n']}", id=f"more-{uuid.uuid4()}"),
    ]
    version = saver.get_next_version(checkpoint["channel_versions"].get("messages"), None)
    checkpoint.update(
        id=str(uuid6(clock_seq=-1)),
        channel_values=values,
        channel_versions={**checkpoint["channel_versions"], "messages": version},
    )
    config = saver.put(
        latest.config, checkpoint, {"source": "loop", "step": state["n"]}, {"messages": version}
    )
    state["latest"] = latest._replace(config=config, checkpoint=checkpoint)


def measure(*, turns: int = 500, quick: bool = False) -> list[Any]:
    """The rows of case 19 for the benchmark table."""
    from django.db import connection
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    from chronica import ChronicumNotFound, services
    from chronica.integrations.langgraph import ChronicaSaver

    from .database import conninfo
    from .report import Row, met

    with PostgresSaver.from_conn_string(conninfo()) as theirs:
        theirs.setup()
        theirs.delete_thread(THREAD)
        ours = ChronicaSaver(OWNER)
        with contextlib.suppress(ChronicumNotFound):
            services.delete_chronicum(OWNER, THREAD)
        ours.delete_thread(THREAD)
        print(f"writing a {turns}-turn thread with ChronicaSaver and PostgresSaver ...", flush=True)
        _graph(None)  # LangGraph's modules imported before any side is timed
        began = time.perf_counter()
        _converse(ours, turns)
        our_write = time.perf_counter() - began
        began = time.perf_counter()
        _converse(theirs, turns)
        their_write = time.perf_counter() - began
        pooled_write = _pooled_write(turns)
        config = {"configurable": {"thread_id": THREAD}}
        assert (
            ours.get_tuple(config).checkpoint["channel_values"]
            == (theirs.get_tuple(config).checkpoint["channel_values"])
        ), "the two savers read back different states"

        with connection.cursor() as cursor:
            ours_bytes = _row_bytes(cursor, _OUR_TABLES, "thread_id", THREAD)
            acta_bytes = _row_bytes(cursor, ("acta",), "chronicum_id", THREAD)
        with theirs.conn.cursor(row_factory=dict_row) as cursor:
            theirs_bytes = sum(
                int(
                    cursor.execute(
                        f"SELECT coalesce(sum(pg_column_size(t.*)), 0) AS n FROM {table} t"
                        " WHERE thread_id = %s",
                        [THREAD],
                    ).fetchone()["n"]
                )
                for table in _PG_TABLES
            )
        n_checkpoints = len(list(ours.list(config)))

        n_rounds = 5 if quick else 15
        ops = 20
        timed: dict[str, dict[str, list[float]]] = {}
        timed["get_tuple"] = rounds(
            {"ours": lambda: ours.get_tuple(config), "theirs": lambda: theirs.get_tuple(config)},
            ops=ops,
            rounds=n_rounds,
            warmup=3,
        )
        states = {
            name: {"latest": saver.get_tuple(config), "n": 0}
            for name, saver in (("ours", ours), ("theirs", theirs))
        }
        timed["put"] = rounds(
            {
                "ours": lambda: _next_put(ours, states["ours"]),
                "theirs": lambda: _next_put(theirs, states["theirs"]),
            },
            ops=ops,
            rounds=n_rounds,
            warmup=3,
        )
        timed["list, newest 20"] = rounds(
            {
                "ours": lambda: list(ours.list(config, limit=20)),
                "theirs": lambda: list(theirs.list(config, limit=20)),
            },
            ops=2,
            rounds=n_rounds,
            warmup=1,
        )
        timed["list, all"] = rounds(
            {
                "ours": lambda: list(ours.list(config)),
                "theirs": lambda: list(theirs.list(config)),
            },
            ops=1,
            rounds=3 if quick else 5,
            warmup=0,
        )

    case = f"19 langgraph ({turns} turns, {n_checkpoints} checkpoints)"
    rows = []
    for measure_name, result in timed.items():
        ratio = paired_ratio(result["ours"], result["theirs"])
        rows.append(
            Row(
                case,
                f"{measure_name} (vs PostgresSaver)",
                f"{median(result['ours']):,.1f} ops/s",
                f"{median(result['theirs']):,.1f} ops/s",
                f"{ratio:.1f}x",
                ">= 2x",
                met(ratio >= 2),
            )
        )
    total = ours_bytes + acta_bytes
    rows.append(
        Row(
            case,
            "bytes on disk (rows; ours incl. acta)",
            f"{total / 2**20:,.2f} MiB ({acta_bytes / 2**20:,.2f} acta)",
            f"{theirs_bytes / 2**20:,.1f} MiB",
            f"1/{theirs_bytes / total:.0f}",
            "<= 1/10",
            met(total * 10 <= theirs_bytes),
        )
    )
    rows.append(
        Row(
            case,
            f"writing the {turns} turns through the graph",
            f"{our_write:.1f} s",
            f"{their_write:.1f} s",
            f"{their_write / our_write:.1f}x",
        )
    )
    rows.append(
        Row(
            case,
            f"writing the {turns} turns through the graph, Django's connection pool on",
            f"{pooled_write:.1f} s",
            f"{their_write:.1f} s",
            f"{their_write / pooled_write:.1f}x",
        )
    )
    return rows


class _Pooled:
    """Every model on the "pooled" alias (benchmarks/settings.py: Django's pool)."""

    def db_for_read(self, model: Any, **hints: Any) -> str:
        return "pooled"

    def db_for_write(self, model: Any, **hints: Any) -> str:
        return "pooled"

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool:
        return True


def _pooled_write(turns: int) -> float:
    """The seconds ChronicaSaver takes to write the thread (under another ID) with every
    statement on Django's connection pool: LangGraph's sync run puts its checkpoints from
    worker threads it starts for each run, and each opens a connection of its own, which
    the pool hands out instead of PostgreSQL starting a backend for it."""
    from django.db import connections
    from django.test import override_settings

    from chronica import ChronicumNotFound, services
    from chronica.integrations.langgraph import ChronicaSaver

    thread_id = f"{THREAD}-pooled"
    try:
        with override_settings(DATABASE_ROUTERS=[f"{__name__}._Pooled"]):
            saver = ChronicaSaver(OWNER)
            with contextlib.suppress(ChronicumNotFound):
                services.delete_chronicum(OWNER, thread_id)
            saver.delete_thread(thread_id)
            began = time.perf_counter()
            _converse(saver, turns, thread_id)
            return time.perf_counter() - began
    finally:
        connections["pooled"].close()
        connections["pooled"].close_pool()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.langgraph")
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    import django

    django.setup()
    from .database import ensure_database
    from .report import table

    ensure_database()
    print(table(measure(turns=args.turns, quick=args.quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
