"""7. Budgeted windows: ``get_acta(max_tokens=8000)`` on 1k and on 1M acta, and the same
budget on a 10,000-message history against langchain-postgres's
``PostgresChatMessageHistory.get_messages`` trimmed by langchain-core's ``trim_messages``.

No ``from __future__ import annotations`` here: ``trim_messages`` tells a per-message
token counter from a per-list one by its parameter's annotation being ``BaseMessage``.
"""

import uuid
from collections.abc import Callable

import psycopg
from django.db import connection
from django.test.utils import CaptureQueriesContext
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    trim_messages,
)
from langchain_postgres import PostgresChatMessageHistory

from chronica import services
from chronica.tokens import content_tokens

from .database import OWNER, conninfo
from .report import Row, met, us
from .timing import median, paired_ratio, rounds

BUDGET = 8000
HISTORY = "bench-10k"
LANGCHAIN_TABLE = "langchain_chat_history"
LANGCHAIN_SESSION = str(uuid.uuid5(uuid.NAMESPACE_URL, "chronica-bench/" + HISTORY))


def growth(*, ops: int, n_rounds: int) -> tuple[list[Row], str]:
    """Latency of the same budget on a 1k, a 100k and a 1M session, and the plan on 1M."""
    sizes = {"1k": "bench-1k", "100k": "bench-100k", "1M": "bench-1m"}
    sides: dict[str, Callable[[], object]] = {
        label: (lambda cid=cid: services.get_acta(OWNER, cid, max_tokens=BUDGET))
        for label, cid in sizes.items()
    }
    kept = {label: len(side()) for label, side in sides.items()}  # type: ignore[arg-type]
    got = rounds(sides, ops=max(5, ops // 4), rounds=n_rounds, warmup=10)
    rows = [
        Row(
            "7 budget",
            f"get_acta(max_tokens={BUDGET}), {label} acta ({kept[label]} kept)",
            us(median(got[label])),
            "" if label == "1k" else f"1k: {us(median(got['1k']))}",
        )
        for label in sizes
    ]
    ratio = paired_ratio(got["1k"], got["1M"])
    with CaptureQueriesContext(connection) as sent:
        services.get_acta(OWNER, "bench-1m", max_tokens=BUDGET)
    with connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) "
            + sent.captured_queries[-1]["sql"]
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    rows += [
        Row(
            "7 budget",
            f"latency max_tokens={BUDGET}, 1M / 1k",
            ratio=f"{ratio:.2f}",
            target="<= 1.30",
            met=met(ratio <= 1.3),
        ),
        Row(
            "7 budget",
            "budget plan: index probes only, no Seq Scan",
            target="index",
            met=met("Seq Scan" not in plan and "acta_chronicum_seq" in plan),
        ),
    ]
    return rows, plan


def _tokens(message: BaseMessage) -> int:
    # chronica's default formula, so that both sides cut the same window.
    return content_tokens(str(message.content))


def load_langchain() -> None:
    """The 10k session's acta as a LangChain history, written through its own API
    (``create_tables``, ``add_messages``), unless it is there already."""
    types = {"human": HumanMessage, "agent": AIMessage, "system": SystemMessage}
    with psycopg.connect(conninfo()) as conn:
        PostgresChatMessageHistory.create_tables(conn, LANGCHAIN_TABLE)
        history = PostgresChatMessageHistory(
            LANGCHAIN_TABLE, LANGCHAIN_SESSION, sync_connection=conn
        )
        acta = conn.execute(
            "SELECT actor_kind, content FROM acta WHERE chronicum_id = %s ORDER BY seq", [HISTORY]
        ).fetchall()
        stored = conn.execute(
            f"SELECT count(*) FROM {LANGCHAIN_TABLE} WHERE session_id = %s",
            [LANGCHAIN_SESSION],
        ).fetchone()
        if stored is not None and stored[0] == len(acta):
            return
        history.clear()
        messages = [types[actor_kind](content=content) for actor_kind, content in acta]
        for start in range(0, len(messages), 1000):
            history.add_messages(messages[start : start + 1000])
        conn.execute(f"ANALYZE {LANGCHAIN_TABLE}")


def langchain(*, n_rounds: int) -> list[Row]:
    """The same budget over the same 10,000 messages: chronica's one statement against
    langchain-postgres reading them all and langchain-core trimming them in Python."""
    load_langchain()
    conn = psycopg.connect(conninfo(), autocommit=True)
    history = PostgresChatMessageHistory(LANGCHAIN_TABLE, LANGCHAIN_SESSION, sync_connection=conn)

    def chronica_op() -> list:  # type: ignore[type-arg]
        return services.get_acta(OWNER, HISTORY, max_tokens=BUDGET)

    def langchain_op() -> list:  # type: ignore[type-arg]
        return trim_messages(  # type: ignore[no-any-return]
            history.get_messages(), max_tokens=BUDGET, token_counter=_tokens, strategy="last"
        )

    def read_op() -> list:  # type: ignore[type-arg]
        return history.get_messages()

    try:
        ours = [a.content for a in chronica_op()]
        theirs = [m.content for m in langchain_op()]
        if ours != theirs or not ours:
            raise SystemExit("chronica and LangChain cut different windows: the comparison is off")
        sides = {"chronica": chronica_op, "langchain": langchain_op, "read": read_op}
        got = rounds(
            sides,
            ops={"chronica": 20, "langchain": 1, "read": 1},
            rounds=n_rounds,
            warmup={"chronica": 5, "langchain": 1, "read": 1},
        )
    finally:
        conn.close()
    speedup = paired_ratio(got["chronica"], got["langchain"])
    lc = f"{1e3 / median(got['langchain']):,.0f} ms"
    return [
        Row(
            "7 budget",
            f"max_tokens={BUDGET} on 10k messages ({len(ours)} kept), vs langchain-postgres"
            " get_messages + trim_messages",
            us(median(got["chronica"])),
            f"langchain: {lc}",
            f"{speedup:,.0f}x",
        ),
        Row(
            "7 budget",
            "langchain-postgres get_messages() alone, 10k messages",
            "",
            f"langchain: {1e3 / median(got['read']):,.0f} ms",
        ),
    ]
