"""6. PydanticAI: ``load(limit=20)`` of a 100,000-message conversation in chronica.

Against PydanticAI's own ``InMemoryConversationStore`` holding the same conversation,
and against a 100-message conversation in chronica (growth, target <= 1.3x).

``python -m benchmarks.pydantic_ai [--no-load] [--quick]`` on its own, or as the
``pydantic-ai`` case of ``python -m benchmarks``. Both conversations are loaded with
COPY, as the store would have written them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from .timing import median, paired_ratio, rounds

OWNER = "ardian"
SIZES = {"100": 100, "100k": 100_000}
WINDOW = 20


def conversation_id(label: str) -> str:
    return f"bench-pydantic-ai-{label}"


def history(n: int) -> list[Any]:
    """``n`` messages: ardian and the concierge taking turns, a tool call every tenth turn."""
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    messages: list[Any] = []
    turn = 0
    while len(messages) < n:
        text = f"dinner on friday, turn {turn}: " + "table for four at eight? " * 4
        if turn % 10 == 9:
            call = f"search-{turn}"
            messages.append(
                ModelResponse(
                    parts=[ToolCallPart("search", {"area": "Kemang"}, tool_call_id=call)],
                    model_name="concierge",
                )
            )
            messages.append(
                ModelRequest(parts=[ToolReturnPart("search", ["Rumah Teduh"], tool_call_id=call)])
            )
        else:
            messages.append(ModelRequest(parts=[UserPromptPart(text)]))
            messages.append(ModelResponse(parts=[TextPart(text)], model_name="concierge"))
        turn += 1
    return messages[:n]


def load() -> None:
    """Write both conversations again (the filler load empties the chronica table).

    As the store would write them (the same acta, entries and record), but with COPY:
    one save of 100,000 messages takes about 40 s, most of it quoting the batch's
    arrays on the client, and the point here is to read them."""
    import datetime as dt
    import secrets

    import psycopg
    from pydantic_ai.conversation_store import ConversationRecord

    from chronica import ChronicumNotFound, services
    from chronica.integrations.pydantic_ai import actum_of
    from chronica.integrations.pydantic_ai.models import PydanticAIConversation
    from chronica.validation import dumps_data

    from .database import conninfo

    records = PydanticAIConversation.objects
    for label, n in SIZES.items():
        cid = conversation_id(label)
        records.filter(conversation_id=cid).delete()
        with contextlib.suppress(ChronicumNotFound):
            services.delete_chronicum(OWNER, cid)
        services.create_chronicum(OWNER, cid)
        entry_ids = [f"{cid}-entry-{i}" for i in range(n)]
        record = ConversationRecord(conversation_id=cid, head_id=entry_ids[-1], scope=OWNER)
        records.create(
            conversation_id=cid,
            owner_id=OWNER,
            scope=OWNER,
            revision=record.revision,
            updated_at=record.updated_at,
            record=record_json(record),
        )
        now = dt.datetime.now(dt.UTC)
        actum_ids = [secrets.token_hex(16) for _ in range(n)]
        with psycopg.connect(conninfo()) as conn, conn.cursor() as cursor:
            columns = "id, chronicum_id, kind, actor_kind, actor, content, at, call_id, data"
            with cursor.copy(f"COPY acta ({columns}) FROM STDIN") as copy:
                for actum_id, message in zip(actum_ids, history(n), strict=True):
                    a = actum_of(message, cid, OWNER)
                    who = (a.kind.value, a.actor_kind.value, a.actor)
                    what = (a.content, now, a.call_id, dumps_data(a.data))
                    copy.write_row((actum_id, cid, *who, *what))
            columns = "conversation_id, entry_id, parent_id, actum_id"
            with cursor.copy(f"COPY chronica_pydantic_ai_entries ({columns}) FROM STDIN") as copy:
                for i, (entry_id, actum_id) in enumerate(zip(entry_ids, actum_ids, strict=True)):
                    copy.write_row((cid, entry_id, entry_ids[i - 1] if i else None, actum_id))
            for table in ("acta", "chronica_pydantic_ai_entries"):
                cursor.execute(f"ANALYZE {table}")


def record_json(record: Any) -> Any:
    from pydantic import TypeAdapter
    from pydantic_ai.conversation_store import ConversationRecord

    return TypeAdapter(ConversationRecord).dump_python(record, mode="json")


def measure(*, ops: int, n_rounds: int, reload: bool = True) -> list[Any]:
    """The rows of case 6 for the benchmark table."""
    from pydantic_ai.conversation import Conversation
    from pydantic_ai.conversation_store import InMemoryConversationStore

    from chronica.integrations.pydantic_ai import ChronicaConversationStore

    from .report import Row, met

    if reload:
        print("loading PydanticAI conversations of 100 and 100,000 messages ...", flush=True)
        load()
    loop = asyncio.new_event_loop()
    rows: list[Row] = []
    store = ChronicaConversationStore()
    big = conversation_id("100k")
    reference = InMemoryConversationStore()
    start = time.perf_counter()
    try:
        whole = loop.run_until_complete(store.load(big))
    except LookupError:
        whole = None  # its chronicum went with the filler load's TRUNCATE
    whole_seconds = time.perf_counter() - start
    if whole is None or len(whole.messages) != SIZES["100k"]:
        raise SystemExit(f"{big} is not loaded: run without --no-load")
    loop.run_until_complete(
        reference.save(Conversation(messages=whole.messages, conversation_id=big), scope=OWNER)
    )
    ours = loop.run_until_complete(store.load(big, limit=WINDOW))
    theirs = loop.run_until_complete(reference.load(big, limit=WINDOW))
    if ours is None or theirs is None or ours.messages != theirs.messages:
        raise SystemExit("chronica and InMemoryConversationStore disagree on the last 20")

    def loading(on: Any, cid: str) -> Callable[[], object]:
        return lambda: loop.run_until_complete(on.load(cid, limit=WINDOW))

    sides = {
        "chronica 100": loading(store, conversation_id("100")),
        "chronica 100k": loading(store, big),
        "in-memory 100k": loading(reference, big),
    }
    got = rounds(sides, ops=ops, rounds=n_rounds, warmup=20)
    loop.close()

    def latency(label: str) -> str:
        return f"{1e6 / median(got[label]):,.0f} µs"

    against = paired_ratio(got["in-memory 100k"], got["chronica 100k"])  # our latency / theirs
    growth = paired_ratio(got["chronica 100"], got["chronica 100k"])  # latency 100k / 100
    rows += [
        Row("12 pydantic-ai", "load(limit=20), 100 messages", latency("chronica 100")),
        Row(
            "12 pydantic-ai",
            "load(limit=20), 100k messages; floor: InMemoryConversationStore",
            latency("chronica 100k"),
            latency("in-memory 100k"),
            f"{against:.2f}x the time",
        ),
        Row(
            "12 pydantic-ai",
            "latency 100k / 100",
            ratio=f"{growth:.2f}",
            target="<= 1.30",
            met=met(growth <= 1.3),
        ),
        Row("12 pydantic-ai", "load() of all 100k messages, once", f"{whole_seconds:.1f} s"),
        Row(
            "12 pydantic-ai",
            "next entry found on (conversation_id, seq)",
            target="index",
            met=met(next_entry_on_index(store)),
        ),
    ]
    return rows


def next_entry_on_index(store: Any) -> bool:
    """Whether the chain query finds the entry after the 100-message conversation's
    head on the (conversation_id, seq) index, not by walking the primary key through
    the 100k conversation written after it."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    cid = conversation_id("100")
    record = store._load_record(cid)
    with CaptureQueriesContext(connection) as sent:
        store._chain(record.head_id, WINDOW, cid)
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (COSTS OFF) " + sent.captured_queries[-1]["sql"])
        plan = "\n".join(row[0] for row in cursor.fetchall())
    return "pai_entries_conversation_seq" in plan


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pydantic_ai")
    parser.add_argument("--no-load", action="store_true", help="reuse the loaded conversations")
    parser.add_argument("--quick", action="store_true", help="fewer rounds, for trying things")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    import django

    django.setup()
    from .database import ensure_database
    from .report import table

    ensure_database()
    ops, n_rounds = (50, 5) if args.quick else (100, 31)
    print(table(measure(ops=ops, n_rounds=n_rounds, reload=not args.no_load)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
