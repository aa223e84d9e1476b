"""Search's index is kept by the database: rows written, changed or deleted by any
writer (raw SQL, the Go library's seed-only writers, redaction, erasure, retention) are
found by what they hold now, or not at all; migration 0012 indexes the rows already
there; its frozen statements are the store's."""

from __future__ import annotations

import datetime as dt
import importlib
import json

import pytest
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor

from chronica import ActorKind, Actum, ActumKind, services
from chronica.search import SEARCHED_CHARACTERS
from chronica.stores.db import search
from chronica.validation import DEFAULT_MAX_ACTUM_BYTES

from .. import scenario
from ..scenario import CHRONICUM, OWNER
from ..texts import densest, distinct_words

pytestmark = pytest.mark.django_db(transaction=True)

migration = importlib.import_module("chronica.migrations.0012_search")
bounded = importlib.import_module("chronica.migrations.0014_search_bounded")
TSVECTOR_MAX = 1_048_575  # bytes of lexemes and positions


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


def seed_only_write(actum_id: str, content: str) -> None:
    """An actum written as the Go library writes: the seed's columns only."""
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


def test_a_seed_only_writers_rows_are_found():
    """The Go library's writers know only the seed's columns: their rows are indexed."""
    seed_only_write("go-1", "Written from Go: the table at Kayu Manis.")
    (hit,) = services.search_acta(OWNER, "kayu manis")
    assert (hit.actum.chronicum_id, hit.actum.id) == ("go-session", "go-1")


def test_a_seed_only_writers_long_row_of_distinct_words_is_written_and_found():
    """As the Go library writes a tool's result: 4 MB of distinct words, the index does
    not refuse it."""
    seed_only_write("go-long", "Kayu Manis, the page: " + distinct_words(DEFAULT_MAX_ACTUM_BYTES))
    (hit,) = services.search_acta(OWNER, "kayu manis")
    assert hit.actum.id == "go-long"


def tsvector_bytes(actum_id: str) -> int:
    """What PostgreSQL holds to its limit of the actum's tsvector: each lexeme's bytes,
    padded to two, and its positions with their count."""
    from chronica.conf import chronica_settings

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT sum(octet_length(lexeme) + octet_length(lexeme) %% 2 + 2"
            " + 2 * coalesce(array_length(positions, 1), 0))"
            f" FROM acta, unnest({search.vector(chronica_settings.SEARCH_CONFIG)})"
            " WHERE id = %s",
            [actum_id],
        )
        return cursor.fetchone()[0]


@pytest.mark.parametrize("data_chars", [SEARCHED_CHARACTERS - 30, DEFAULT_MAX_ACTUM_BYTES // 8])
def test_the_densest_text_we_could_build_is_recorded(data_chars):
    """Content and a string of data of the densest text for PostgreSQL's tsvector, as
    much of it as MAX_ACTUM_BYTES allows, data's JSON within the bound (read whole) and
    past it (read as text, cut). On PostgreSQL: under the limit, at its worst."""
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
    (recorded,) = services.record_acta(OWNER, [actum])
    assert [h.actum.content for h in services.search_acta(OWNER, "teduh")] == [content]
    assert [h.actum.data for h in services.search_acta(OWNER, "kayu manis")] == [data]
    if connection.vendor == "postgresql":
        size = tsvector_bytes(recorded.id)
        assert size <= TSVECTOR_MAX * 0.8
        assert size / (2 * SEARCHED_CHARACTERS) > 7.5  # bytes a character: near the worst


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


def index_definition() -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT string_agg(c.relname || ' ' || i.indisvalid || ' '"
            " || pg_get_indexdef(c.oid), '; ')"
            " FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " WHERE c.relname LIKE 'acta_search%%'"
        )
        return cursor.fetchone()[0]


def test_the_bounded_migration_indexes_the_long_rows_already_there_again():
    """0014 (and back): PostgreSQL's index built again beside the old one (a leftover
    of an interrupted run dropped), SQLite's triggers made again and the long acta
    indexed again; a word past the bound is found no more, one before it still is."""
    services.record_acta(OWNER, scenario.acta())
    executor = MigrationExecutor(connection)
    text = f"Canggu {distinct_words(SEARCHED_CHARACTERS)} Seminyak"
    try:
        executor.migrate([("chronica", "0013_forgetting")])
        if connection.vendor == "postgresql":
            assert "50000" not in index_definition()
            with connection.cursor() as cursor:
                cursor.execute("CREATE INDEX acta_search_next ON acta (id)")
        services.record_acta(
            OWNER,
            [
                Actum(
                    chronicum_id="long",
                    kind=ActumKind.TOOL_RESPONSE,
                    actor_kind=ActorKind.AGENT,
                    actor="fetch",
                    content=text,
                    data={"page": text},
                )
            ],
        )
        if connection.vendor == "sqlite":
            assert found("seminyak") == [text]
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
    assert found("seminyak") == []
    assert found("canggu") == [text]
    assert len(found('"rumah teduh"')) == 4
    if connection.vendor == "postgresql":
        definition = index_definition()
        assert definition.startswith("acta_search true CREATE INDEX acta_search ON")
        assert "(content, 50000)" in definition
        assert "acta_search_next" not in definition


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_going_back_fails_cleanly_while_an_actum_0012s_index_cannot_hold_is_stored():
    seed_only_write("go-long", "Kayu Manis, the page: " + distinct_words(2_000_000))
    executor = MigrationExecutor(connection)
    with pytest.raises(DatabaseError, match="too long for tsvector"):
        executor.migrate([("chronica", "0013_forgetting")])
    definition = index_definition()
    assert definition.startswith("acta_search true CREATE INDEX acta_search ON")
    assert "(content, 50000)" in definition
    assert "acta_search_next" not in definition
    assert MigrationExecutor(connection).migration_plan([("chronica", "0014_search_bounded")]) == []
    assert [h.actum.id for h in services.search_acta(OWNER, "kayu manis")] == ["go-long"]


def test_the_migrations_statements_are_the_stores():
    """The newest migration's statements are the store's; those it goes back to are
    0012's."""
    assert bounded.PG_VECTOR.format(config="english") == search.vector("english")
    assert bounded.SQLITE_TEXT.format(row="new") == search.FTS5_TEXT("new")
    assert bounded.SQLITE_OWNER.format(row="new") == search.FTS5_OWNER("new")
    assert bounded.PG_BUILD[-1].endswith(f"RENAME TO {search.INDEX_NAME}")
    assert f"> {SEARCHED_CHARACTERS}" in bounded.SQLITE_LONG
    assert bounded.PG_VECTOR_0012 == migration.PG_VECTOR
    assert bounded.SQLITE_TEXT_0012 == migration.SQLITE_TEXT
    assert bounded.SQLITE_OWNER == migration.SQLITE_OWNER
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
