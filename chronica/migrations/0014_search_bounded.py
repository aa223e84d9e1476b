"""Search's index built again on the first 50,000 characters of each actum's content and
of the strings inside its ``data`` (``chronica.search.SEARCHED_CHARACTERS``).

PostgreSQL's ``tsvector`` holds at most 1 MB: under the index of ``0012_search`` an
actum of many distinct words (a long tool result) could not be written at all, by any
writer. This migration builds the bounded index beside the old one, concurrently, as
``acta_search_next`` (writers go on writing; the migration is not atomic for that),
drops the old one, concurrently, and gives the new one its name. A run interrupted
anywhere can run again: a leftover ``acta_search_next``, valid or not, is dropped
first. Both indexes are on disk for a while.

SQLite: the triggers that keep the FTS5 table are made again with the bounded text, and
the acta whose content or data is longer than the bound are indexed again (every other
actum's text is the same either way). The copy holds SQLite's one write lock.

Reversed, the index of ``0012_search`` comes back the same way; on PostgreSQL not while
an actum it cannot hold is stored (the half-built index is dropped, the error raised).
The statements are frozen here; ``tests/stores/test_search_index.py`` holds them equal
to the store's.
"""

from django.db import DatabaseError, migrations, transaction

PG_VECTOR = (
    "(to_tsvector('{config}'::regconfig, left(content, 50000))"
    " || CASE WHEN length(data::text) > 50000"
    " THEN to_tsvector('{config}'::regconfig, regexp_replace(left(jsonb_path_query_array("
    "data, 'strict $.** ? (@.type() == \"string\")')::text, 50000),"
    r" E'\\\\(u[0-9A-Fa-f]{{4}}|.)', ' ', 'g'))"
    " ELSE jsonb_to_tsvector('{config}'::regconfig, COALESCE(data, 'null'::jsonb),"
    " '[\"string\"]'::jsonb) END)"
)
# 0012_search's, to go back to.
PG_VECTOR_0012 = (
    "(to_tsvector('{config}'::regconfig, content)"
    " || jsonb_to_tsvector('{config}'::regconfig, COALESCE(data, 'null'::jsonb),"
    " '[\"string\"]'::jsonb))"
)
PG_BUILD = [
    "DROP INDEX CONCURRENTLY IF EXISTS acta_search_next",
    "CREATE INDEX CONCURRENTLY acta_search_next ON acta USING GIN ({vector})",
    "DROP INDEX CONCURRENTLY IF EXISTS acta_search",
    "ALTER INDEX acta_search_next RENAME TO acta_search",
]

SQLITE_TEXT = (
    "substr({row}.content, 1, 50000) || ' ' || substr(COALESCE((SELECT group_concat(value, ' ')"
    " FROM json_tree({row}.data) WHERE type = 'text'), ''), 1, 50000)"
)
# 0012_search's, to go back to.
SQLITE_TEXT_0012 = (
    "{row}.content || ' ' || COALESCE((SELECT group_concat(value, ' ')"
    " FROM json_tree({row}.data) WHERE type = 'text'), '')"
)
SQLITE_OWNER = "(SELECT 'o' || hex(owner_id) FROM chronica WHERE id = {row}.chronicum_id)"
# The acta whose text the bound changes: the others' content is shorter than the bound,
# and so are data's strings, one space apart, shorter than data's JSON, where each has
# its quotes.
SQLITE_LONG = "length({row}.content) > 50000 OR length({row}.data) > 50000"
SQLITE_BUILD = [
    "DROP TRIGGER IF EXISTS acta_search_insert",
    "DROP TRIGGER IF EXISTS acta_search_update",
    "CREATE TRIGGER acta_search_insert AFTER INSERT ON acta BEGIN"
    " INSERT INTO acta_search (rowid, text, owner) VALUES (new.seq, {new}, {new_owner}); END",
    "CREATE TRIGGER acta_search_update AFTER UPDATE OF content, data ON acta"
    " BEGIN DELETE FROM acta_search WHERE rowid = old.seq;"
    " INSERT INTO acta_search (rowid, text, owner) VALUES (new.seq, {new}, {new_owner}); END",
    "DELETE FROM acta_search WHERE rowid IN (SELECT a.seq FROM acta a WHERE {a_long})",
    "INSERT INTO acta_search (rowid, text, owner) SELECT a.seq, {a}, {a_owner} FROM acta a"
    " WHERE {a_long}",
]


def pg_statements(vector, config):
    return [s.format(vector=vector.format(config=config)) for s in PG_BUILD]


def sqlite_statements(text):
    pieces = {
        "new": text.format(row="new"),
        "a": text.format(row="a"),
        "new_owner": SQLITE_OWNER.format(row="new"),
        "a_owner": SQLITE_OWNER.format(row="a"),
        "a_long": SQLITE_LONG.format(row="a"),
    }
    return [s.format(**pieces) for s in SQLITE_BUILD]


def rebuild(schema_editor, pg_vector, sqlite_text):
    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        from chronica.conf import chronica_settings

        with connection.cursor() as cursor:
            for statement in pg_statements(pg_vector, chronica_settings.SEARCH_CONFIG):
                try:
                    cursor.execute(statement)
                except DatabaseError:
                    # The half-built index is dropped; the one in place stays.
                    cursor.execute(PG_BUILD[0])
                    raise
    elif connection.vendor == "sqlite":
        with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
            for statement in sqlite_statements(sqlite_text):
                cursor.execute(statement)


def bound(apps, schema_editor):
    rebuild(schema_editor, PG_VECTOR, SQLITE_TEXT)


def unbound(apps, schema_editor):
    rebuild(schema_editor, PG_VECTOR_0012, SQLITE_TEXT_0012)


class Migration(migrations.Migration):
    # CREATE INDEX CONCURRENTLY runs outside a transaction.
    atomic = False

    dependencies = [
        ("chronica", "0013_forgetting"),
    ]

    operations = [
        migrations.RunPython(bound, unbound),
    ]
