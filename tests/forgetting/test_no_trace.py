"""No trace: a marker written into an actum's content, its data and a tool call's
argument is gone from every table of the database once the actum is redacted; a marker
in an owner's ID, session IDs, content, state, credentials and PydanticAI records is
gone once the owner is erased. The scan reads the catalog, not a list of chronica's
tables: every table of the database (on SQLite the virtual tables and their shadow
tables too, such as a full-text index), every column. On PostgreSQL, after VACUUM,
the tuples on the tables' pages (and their TOAST tables') are read with pageinspect,
where the extension can be created."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

import pytest
from django.db import connection

from chronica import ActorKind, Actum, ActumKind, StateChange, StateScope, services

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def marker() -> str:
    return "zq" + secrets.token_hex(8)


def tables() -> list[str]:
    """Every table of the database, from its catalog."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        else:
            cursor.execute(
                "SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) FROM pg_tables"
                " WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"
            )
        return [row[0] for row in cursor.fetchall()]


def holds(value: Any, text: str) -> bool:
    if isinstance(value, str):
        return text in value
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        return text.encode() in raw or text.encode().hex().encode() in raw
    return False


def traces(text: str) -> list[str]:
    """The tables (and columns) that hold ``text`` anywhere."""
    found = []
    with connection.cursor() as cursor:
        for table in tables():
            if connection.vendor == "postgresql":
                # The whole row as text: every column, whatever its type (json, jsonb,
                # tsvector, arrays; bytea in hex).
                cursor.execute(
                    f"SELECT count(*) FROM {table} t WHERE t::text LIKE %s OR t::text LIKE %s",
                    [f"%{text}%", f"%{text.encode().hex()}%"],
                )
                if cursor.fetchone()[0]:
                    found.append(table)
                continue
            quoted = connection.ops.quote_name(table)
            try:
                cursor.execute(f"SELECT * FROM {quoted}")
            except Exception as exc:  # a virtual table whose module this build lacks
                found.append(f"{table}: unreadable ({exc})")
                continue
            names = [d[0] for d in cursor.description]
            for row in cursor.fetchall():
                found += [f"{table}.{n}" for n, v in zip(names, row, strict=True) if holds(v, text)]
    return found


def page_traces(text: str) -> list[str] | None:
    """PostgreSQL, after VACUUM: the tables (and TOAST tables) whose pages hold a tuple
    with ``text``; ``None`` where pageinspect cannot be had."""
    with connection.cursor() as cursor:
        try:
            cursor.execute("CREATE EXTENSION IF NOT EXISTS pageinspect")
        except Exception as exc:
            print(f"pageinspect is not available ({exc}): the pages are not read")
            return None
        cursor.execute("VACUUM")
        cursor.execute(
            "SELECT c.oid::regclass::text, c.relpages FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE c.relkind IN ('r', 't') AND n.nspname NOT IN ('pg_catalog',"
            " 'information_schema') AND (c.relkind = 'r' OR c.oid IN (SELECT reltoastrelid"
            " FROM pg_class r JOIN pg_namespace rn ON rn.oid = r.relnamespace"
            " WHERE rn.nspname = 'public'))"
        )
        relations = cursor.fetchall()
        found = []
        for relation, _pages in relations:
            cursor.execute(
                "SELECT count(*) FROM generate_series(0,"
                " (pg_relation_size(%s::regclass) / current_setting('block_size')::int) - 1) b,"
                " heap_page_items(get_raw_page(%s, b::int)) i"
                " WHERE position(convert_to(%s, 'UTF8') in i.t_data) > 0",
                [relation, relation, text],
            )
            if cursor.fetchone()[0]:
                found.append(relation)
        return found


def test_a_redacted_actum_leaves_no_trace():
    secret = marker()
    chronicum = "dinner-friday"
    services.record_actum(
        "ardian",
        Actum(
            chronicum_id=chronicum,
            kind=ActumKind.MESSAGE,
            actor_kind=ActorKind.HUMAN,
            actor="ardian",
            content="Book it, my card is " + secret,
            data={"card": secret},
        ),
    )
    call = services.record_actum(
        "ardian",
        Actum(
            chronicum_id=chronicum,
            kind=ActumKind.TOOL_REQUEST,
            actor_kind=ActorKind.AGENT,
            actor="booking",
            content=f'{{"card": "{secret}"}}',
            call_id="pay-1",
            data={"type": "function_call", "name": "pay", "arguments": {"card": secret}},
        ),
    )
    assert traces(secret)  # the scan finds it where it is
    if connection.vendor == "postgresql":
        assert page_traces(secret) != []  # and so does the page scan (or it is skipped)
    for actum in services.get_acta("ardian", chronicum):
        if secret in actum.content or actum.id == call.id:
            services.redact_actum("ardian", chronicum, actum.id, reason="a card number")
    assert traces(secret) == []
    if connection.vendor == "postgresql":
        assert page_traces(secret) in ([], None)


def test_an_erased_owner_leaves_no_trace():
    pytest.importorskip("pydantic_ai")
    from pydantic_ai.conversation import Conversation
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    from chronica.integrations.pydantic_ai import ChronicaConversationStore

    secret = marker()
    owner = f"owner-{secret}"
    for n in range(3):
        services.record_actum(
            owner,
            Actum(
                chronicum_id=f"chat-{secret}-{n}",
                kind=ActumKind.MESSAGE,
                actor_kind=ActorKind.HUMAN,
                actor="me",
                content=f"remember {secret}",
                data={"note": secret},
            ),
        )
    services.update_state(
        owner,
        f"chat-{secret}-0",
        [StateChange(namespace="app", scope=StateScope.OWNER, set={"likes": secret})],
    )
    services.issue_credential(owner, f"agent-{secret}")
    conversation = Conversation(
        messages=[ModelRequest(parts=[UserPromptPart(f"say {secret}")])],
        conversation_id=f"pai-{secret}",
    )
    asyncio.run(ChronicaConversationStore().save(conversation, scope=owner))
    services.record_actum(
        "rafa",
        Actum(
            chronicum_id="rafa-lunch",
            kind=ActumKind.MESSAGE,
            actor_kind=ActorKind.HUMAN,
            actor="rafa",
            content="Sushi?",
        ),
    )
    assert len(traces(secret)) >= 5
    erasure = services.erase_owner(owner, reason="asked to be forgotten")
    assert erasure.counts["acta"] == 4
    assert traces(secret) == []
    if connection.vendor == "postgresql":
        assert page_traces(secret) in ([], None)
    assert services.get_acta("rafa", "rafa-lunch")[0].content == "Sushi?"


def test_a_popped_actum_and_a_deleted_chronicum_leave_no_trace():
    """pop_actum and delete_chronicum remove the acta from the search index too (the
    triggers). SQLite's FTS5 keeps a removed row's words in its pages until its segments
    are merged: the next forgetting call (a redaction, an erasure, retention) merges them."""
    popped, deleted = marker(), marker()
    for n, secret in enumerate((popped, deleted)):
        services.record_actum(
            "ardian",
            Actum(
                chronicum_id=f"trace-{n}",
                kind=ActumKind.MESSAGE,
                actor_kind=ActorKind.HUMAN,
                actor="ardian",
                content=f"remember {secret}",
            ),
        )
    assert traces(popped)
    assert traces(deleted)
    assert services.pop_actum("ardian", "trace-0") is not None
    services.delete_chronicum("ardian", "trace-1")
    assert services.search_acta("ardian", popped) == []
    assert services.search_acta("ardian", deleted) == []
    if connection.vendor == "sqlite":
        kept = services.record_actum(
            "ardian",
            Actum(
                chronicum_id="trace-2",
                kind=ActumKind.MESSAGE,
                actor_kind=ActorKind.HUMAN,
                actor="ardian",
                content="nothing to keep",
            ),
        )
        services.redact_actum("ardian", "trace-2", kept.id, reason="merge the index")
    assert traces(popped) == []
    assert traces(deleted) == []
