"""Search's index is kept by the database: rows written, changed or deleted by any
writer (raw SQL, the Go library's seed-only writers, redaction, erasure, retention) are
found by what they hold now, or not at all; migration 0012 indexes the rows already
there; its frozen statements are the store's."""

from __future__ import annotations

import datetime as dt
import importlib
import json

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from chronica import ActorKind, Actum, ActumKind, services
from chronica.stores.db import search
from chronica.validation import DEFAULT_MAX_ACTUM_BYTES

from .. import scenario
from ..scenario import CHRONICUM, OWNER
from ..texts import densest, distinct_words

pytestmark = pytest.mark.django_db(transaction=True)

migration = importlib.import_module("chronica.migrations.0012_search")


def found(query: str, owner: str = OWNER) -> list[str]:
    return [hit.actum.content for hit in services.search_acta(owner, query)]


def test_an_update_by_raw_sql_leaves_nothing_of_the_old_text():
    services.record_acta(OWNER, [scenario.booking_reply()])
    services.record_acta(
        OWNER,
        [scenario.booking_reply("Villa Omah Padi is booked.", chronicum_id="villa-ubud")],
    )
    with connection.cursor() as cursor:
        # what a redaction does, by hand: content emptied, data NULL
        cursor.execute(
            "UPDATE acta SET content = '', data = NULL WHERE chronicum_id = %s", [CHRONICUM]
        )
        cursor.execute(
            """UPDATE acta SET content = 'Redacted.', data = '{"note": "kept private"}'"""
            " WHERE chronicum_id = 'villa-ubud'"
        )
    assert found("RT-4821") == []
    assert found("Rumah Teduh") == []
    assert found("omah padi") == []
    assert found("redacted") == ["Redacted."]
    assert found("private") == ["Redacted."]


def test_a_delete_by_raw_sql_leaves_nothing():
    services.record_acta(OWNER, [scenario.booking_reply()])
    assert found("RT-4821")
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM acta WHERE chronicum_id = %s", [CHRONICUM])
        cursor.execute("DELETE FROM chronica WHERE id = %s", [CHRONICUM])
    assert found("RT-4821") == []


def test_a_seed_only_writers_rows_are_found():
    """The Go library's writers know only the seed's columns: their rows are indexed."""
    now = dt.datetime.now(dt.UTC)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO chronica (id, owner_id, started_at, last_activity_at)"
            " VALUES (%s, %s, %s, %s)",
            ["go-session", OWNER, now, now],
        )
        cursor.execute(
            "INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at)"
            " VALUES ('go-1', 'go-session', 'message', 'agent', 'go-agent',"
            " 'Written from Go: the table at Kayu Manis.', %s)",
            [now],
        )
    (hit,) = services.search_acta(OWNER, "kayu manis")
    assert (hit.actum.chronicum_id, hit.actum.id) == ("go-session", "go-1")


def seed_only_write(actum_id: str, content: str) -> None:
    now = dt.datetime.now(dt.UTC)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO chronica (id, owner_id, started_at, last_activity_at)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
            ["go-session", OWNER, now, now],
        )
        cursor.execute(
            "INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at)"
            " VALUES (%s, 'go-session', 'tool_response', 'agent', 'go-fetch', %s, %s)",
            [actum_id, content, now],
        )


def test_a_seed_only_writers_long_row_of_distinct_words_is_written_and_found():
    """As the Go library writes a tool's result: 4 MB of distinct words, the index does
    not refuse it."""
    seed_only_write("go-long", "Kayu Manis, the page: " + distinct_words(DEFAULT_MAX_ACTUM_BYTES))
    (hit,) = services.search_acta(OWNER, "kayu manis")
    assert hit.actum.id == "go-long"


@pytest.mark.parametrize("data_chars", [40_000, DEFAULT_MAX_ACTUM_BYTES // 8])
def test_the_densest_text_we_could_build_is_recorded(data_chars):
    """Content and a string of data of the densest text for PostgreSQL's tsvector, as
    much of it as MAX_ACTUM_BYTES allows, data's JSON short and long."""
    data = {"page": "Kayu Manis " + densest(data_chars, 0x21000)}
    room = DEFAULT_MAX_ACTUM_BYTES - len(json.dumps(data, ensure_ascii=False).encode()) - 100
    content = "Rumah Teduh " + densest(room * 4 // 13)  # 3.25 bytes a character
    actum = Actum(
        chronicum_id="dense",
        kind=ActumKind.TOOL_RESPONSE,
        actor_kind=ActorKind.AGENT,
        actor="fetch",
        content=content,
        data=data,
    )
    services.record_acta(OWNER, [actum])
    assert [h.actum.content for h in services.search_acta(OWNER, "teduh")] == [content]
    assert [h.actum.data for h in services.search_acta(OWNER, "kayu manis")] == [data]


def test_the_migration_indexes_the_rows_already_there():
    services.record_acta(OWNER, scenario.acta())
    executor = MigrationExecutor(connection)
    before = [("chronica", "0011_compaction")]
    try:
        executor.migrate(before)
        # a row written while there was no index, as a writer of that schema writes it
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at)"
                " VALUES ('before-index', %s, 'message', 'agent', 'booking', %s, %s)",
                [CHRONICUM, scenario.BOOKING_REPLY, dt.datetime.now(dt.UTC)],
            )
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
    assert found("RT-4821") == [scenario.BOOKING_REPLY]
    assert len(found('"rumah teduh"')) == 5


def test_the_migrations_statements_are_the_stores():
    assert migration.PG_VECTOR.format(config="english") == search.vector("english")
    assert migration.SQLITE_TEXT.format(row="new") == search.FTS5_TEXT("new")
    assert migration.SQLITE_OWNER.format(row="new") == search.FTS5_OWNER("new")
    assert search.INDEX_NAME in migration.PG_CREATE


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_postgresql_can_search_by_the_index():
    """The statement's expression is the index's, character for character: the planner
    can use the index for it (here made to, sequential scans off)."""
    from chronica.conf import chronica_settings

    config = chronica_settings.SEARCH_CONFIG
    statement = (
        f"EXPLAIN SELECT seq FROM acta a WHERE {search.vector(config, 'a.')}"
        f" @@ {search.tsquery(config)}"
    )
    assert search.vector(config, "a.") in search.PG_SEARCH.format(
        acta="acta",
        chronica="chronica",
        a_columns="",
        filters="",
        only="",
        namespace_is="",
        config=config,
        vector=search.vector(config, "a."),
        tsquery=search.tsquery(config),
        document="",
    )
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        try:
            cursor.execute(statement, {"query": '"kemang"'})
            plan = "\n".join(row[0] for row in cursor.fetchall())
        finally:
            cursor.execute("RESET enable_seqscan")
    assert "Bitmap Index Scan on acta_search" in plan, plan


def test_sqlites_optimize_names_the_index():
    from chronica.stores.db import sqlite

    assert sqlite._OPTIMIZE.startswith(f"INSERT INTO {search.INDEX_NAME}({search.INDEX_NAME})")
