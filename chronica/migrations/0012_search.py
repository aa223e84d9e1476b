"""Search's index, kept by the database itself (``chronica.stores.db.search``).

PostgreSQL: a GIN expression index on the ``tsvector`` of each actum's content and
the strings inside its ``data``, in ``CHRONICA["SEARCH_CONFIG"]`` as it is when this
migration runs, built with ``CREATE INDEX CONCURRENTLY``: writers go on writing while
it is built (the migration is not atomic for that; one left invalid by an interrupted
build is dropped and built again). ``chronica_search --build-index`` builds it again,
for another configuration.

SQLite: the FTS5 table ``acta_search`` (rowid = ``seq``; the text, and the owner as one
word), the triggers that keep it on
every INSERT, UPDATE of content or data, and DELETE of an actum, and every actum
already stored, copied in. SQLite has one writer at a time: the copy holds it.

The statements are frozen here; ``tests/stores/test_search_index.py`` holds them equal
to the store's.
"""

from django.db import migrations, transaction

PG_VECTOR = (
    "(to_tsvector('{config}'::regconfig, content)"
    " || jsonb_to_tsvector('{config}'::regconfig, COALESCE(data, 'null'::jsonb),"
    " '[\"string\"]'::jsonb))"
)
PG_INVALID = (
    "SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
    " WHERE c.relname = 'acta_search' AND NOT i.indisvalid"
)
PG_CREATE = "CREATE INDEX CONCURRENTLY IF NOT EXISTS acta_search ON acta USING GIN ({vector})"
PG_DROP = "DROP INDEX CONCURRENTLY IF EXISTS acta_search"

SQLITE_TEXT = (
    "{row}.content || ' ' || COALESCE((SELECT group_concat(value, ' ')"
    " FROM json_tree({row}.data) WHERE type = 'text'), '')"
)
# The owner of the actum's chronicum as one word ("o" and its UTF-8 in hex): a search
# asks for it first, so FTS5 reads only that owner's entries of a common word.
SQLITE_OWNER = "(SELECT 'o' || hex(owner_id) FROM chronica WHERE id = {row}.chronicum_id)"
SQLITE_CREATE = [
    "CREATE VIRTUAL TABLE IF NOT EXISTS acta_search USING fts5("
    "text, owner, tokenize = 'unicode61 remove_diacritics 0')",
    "CREATE TRIGGER IF NOT EXISTS acta_search_insert AFTER INSERT ON acta BEGIN"
    " INSERT INTO acta_search (rowid, text, owner) VALUES (new.seq, {new}, {new_owner}); END",
    "CREATE TRIGGER IF NOT EXISTS acta_search_update AFTER UPDATE OF content, data ON acta"
    " BEGIN DELETE FROM acta_search WHERE rowid = old.seq;"
    " INSERT INTO acta_search (rowid, text, owner) VALUES (new.seq, {new}, {new_owner}); END",
    "CREATE TRIGGER IF NOT EXISTS acta_search_delete AFTER DELETE ON acta BEGIN"
    " DELETE FROM acta_search WHERE rowid = old.seq; END",
    "DELETE FROM acta_search",
    "INSERT INTO acta_search (rowid, text, owner) SELECT a.seq, {a}, {a_owner} FROM acta a",
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS acta_search_insert",
    "DROP TRIGGER IF EXISTS acta_search_update",
    "DROP TRIGGER IF EXISTS acta_search_delete",
    "DROP TABLE IF EXISTS acta_search",
]


def pg_statements(config):
    return PG_CREATE.format(vector=PG_VECTOR.format(config=config))


def sqlite_statements():
    pieces = {
        "new": SQLITE_TEXT.format(row="new"),
        "a": SQLITE_TEXT.format(row="a"),
        "new_owner": SQLITE_OWNER.format(row="new"),
        "a_owner": SQLITE_OWNER.format(row="a"),
    }
    return [s.format(**pieces) for s in SQLITE_CREATE]


def build(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        from chronica.conf import chronica_settings

        with connection.cursor() as cursor:
            cursor.execute(PG_INVALID)
            if cursor.fetchone():
                cursor.execute(PG_DROP)
            cursor.execute(pg_statements(chronica_settings.SEARCH_CONFIG))
    elif connection.vendor == "sqlite":
        with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
            for statement in sqlite_statements():
                cursor.execute(statement)


def drop(apps, schema_editor):
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(PG_DROP)
        elif connection.vendor == "sqlite":
            for statement in SQLITE_DROP:
                cursor.execute(statement)


class Migration(migrations.Migration):
    # CREATE INDEX CONCURRENTLY runs outside a transaction.
    atomic = False

    dependencies = [
        ("chronica", "0011_compaction"),
    ]

    operations = [
        migrations.RunPython(build, drop),
    ]
