"""PostgreSQL's dialect: a write, a batch and a first write included, is one statement;
followers are woken by NOTIFY (``chronica.stores.listener``).

A write locks the chronicum's row first (the UPDATE, or the upsert, of its
``last_activity_at``, or ``FOR UPDATE`` with a key) and inserts the acta after it, so
their seq is drawn only once the lock is held: within a chronicum, acta become visible
in seq order. The owner is checked in that same statement. A batch travels as one
JSON array, one parameter for any batch size; ``WITH ORDINALITY`` and ``ORDER BY n``
number it in its given order. One actum without a key, the common write, travels as
a parameter a column, which PostgreSQL plans faster.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper

from ...interfaces import Create, Subscription
from ...search import SearchQuery
from ...values import ActaQuery, Actum, Recorded
from ..listener import NOTIFY_CHANNEL, PG_NOTIFY, notify_if_followed
from . import search, sql
from .base import BaseDialect, SearchRead
from .features import Features
from .rows import batch_json, one_row, stamped

__all__ = ["PostgreSQLDialect"]

try:
    from psycopg.types.datetime import TimestamptzLoader
except ImportError:  # psycopg2, which loads times in C itself
    TimestamptzLoader = None  # type: ignore[assignment,misc]

_BATCH = (
    "ROWS FROM (json_to_recordset(%(acta)s::json) AS (id varchar, kind varchar,"
    " actor_kind varchar, actor varchar, content text, call_id varchar, data text,"
    " tokens bigint, recorded_by varchar, key varchar)) WITH ORDINALITY AS"
    " v(id, kind, actor_kind, actor, content, call_id, data, tokens, recorded_by, key, n)"
)

_INSERT = (
    """
INSERT INTO {acta} ({insert_columns})
SELECT v.id, c.id, v.kind, v.actor_kind, v.actor, v.content, c.last_activity_at,
       v.call_id, v.data::jsonb, v.tokens, v.key, v.recorded_by
FROM c, """
    + _BATCH
    + " ORDER BY v.n"
)

# One actum, the most common write: its columns as parameters of their own, no JSON
# array to unpack and order (the statement is planned in about two thirds of the time).
_INSERT_ONE = """
INSERT INTO {acta} ({insert_columns})
SELECT %(id)s, c.id, %(kind)s, %(actor_kind)s, %(actor)s, %(content)s, c.last_activity_at,
       %(call_id)s, %(data)s::jsonb, %(tokens)s, NULL, %(recorded_by)s
FROM c"""

# Into the owner's chronicum (any owner's where the owner is NULL), bumped to the
# write's moment, taken after the row lock; only while the credential is valid and no
# erasure of the owner is under way (sql.CREDENTIAL_OK), as every write.
APPEND = """
WITH c AS (
    UPDATE {chronica} SET last_activity_at = clock_timestamp()
    WHERE id = %(chronicum_id)s AND owner_id = COALESCE(%(owner_id)s, owner_id)
      AND {credential_ok}
    RETURNING id, last_activity_at
), ins AS ({insert})
SELECT c.last_activity_at, {notify} FROM c
"""

# The same, creating the chronicum for its owner where nobody has it: an upsert that
# bumps it only where it is the owner's, so another owner's answers no row.
APPEND_CREATING = """
WITH c AS (
    INSERT INTO {chronica} (id, owner_id, started_at, last_activity_at)
    SELECT %(chronicum_id)s, %(owner_id)s, n.t, n.t FROM (SELECT clock_timestamp() AS t) n
    WHERE {credential_ok}
    ON CONFLICT (id) DO UPDATE SET last_activity_at = clock_timestamp()
    WHERE {chronica}.owner_id = EXCLUDED.owner_id
    RETURNING id, last_activity_at
), ins AS ({insert})
SELECT c.last_activity_at, {notify} FROM c
"""

# With a key: the first actum carries it, and the rest are inserted only from the
# first's result, so a key already used (ON CONFLICT) writes nothing at all, and the
# chronicum is bumped only then. Answers (the write's moment, or NULL when the key was
# used; whether the chronicum was found; the NOTIFY).
APPEND_KEYED = (
    """
WITH c AS (
    SELECT id FROM {chronica}
    WHERE id = %(chronicum_id)s AND owner_id = COALESCE(%(owner_id)s, owner_id)
      AND {credential_ok}
    FOR UPDATE
), first AS (
    INSERT INTO {acta} ({insert_columns})
    SELECT v.id, c.id, v.kind, v.actor_kind, v.actor, v.content, clock_timestamp(),
           v.call_id, v.data::jsonb, v.tokens, v.key, v.recorded_by
    FROM c, """
    + _BATCH
    + """ WHERE v.n = 1
    ON CONFLICT (chronicum_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING chronicum_id, at
), rest AS (
    INSERT INTO {acta} ({insert_columns})
    SELECT v.id, first.chronicum_id, v.kind, v.actor_kind, v.actor, v.content, first.at,
           v.call_id, v.data::jsonb, v.tokens, v.key, v.recorded_by
    FROM first, """
    + _BATCH
    + """ WHERE v.n > 1 ORDER BY v.n
), upd AS (
    UPDATE {chronica} SET last_activity_at = first.at FROM first
    WHERE {chronica}.id = %(chronicum_id)s AND {chronica}.id = first.chronicum_id
)
SELECT (SELECT at FROM first), EXISTS (SELECT 1 FROM c), (SELECT {first_notify} FROM first)
"""
)

# A keyed first write: the chronicum created with the acta, where nobody has it yet (a
# new chronicum has no key used). No row: someone created it meanwhile.
APPEND_KEYED_CREATING = """
WITH c AS (
    INSERT INTO {chronica} (id, owner_id, started_at, last_activity_at)
    SELECT %(chronicum_id)s, %(owner_id)s, n.t, n.t FROM (SELECT clock_timestamp() AS t) n
    WHERE {credential_ok}
    ON CONFLICT (id) DO NOTHING
    RETURNING id, last_activity_at
), ins AS ({insert})
SELECT c.last_activity_at, {notify} FROM c
"""

WRITE_ATTEMPTS = 5
"""How often a keyed write goes round when its chronicum is created, or its batch goes,
between two of its statements."""


class PostgreSQLDialect(BaseDialect):
    features = Features(lists_as_array=True, replicas=True, search_index_built=True)
    has_on_conflict = True
    # (compaction_sql: the batch of a compaction in one statement)
    compaction_insert = "COMPACT_INSERT_POSTGRESQL"

    # ``= ANY(ARRAY[...])``: still an equality, which prunes partitions, but one after
    # which ``ORDER BY chronicum_id DESC, seq DESC`` stays an order only the
    # (chronicum_id, seq) index serves; after a plain ``=`` the planner drops
    # chronicum_id from the order and may walk the primary key backwards instead,
    # reading every newer actum of every other chronicum.
    chronicum_is = "chronicum_id = ANY(ARRAY[%(chronicum_id)s])"
    now = "clock_timestamp()"
    share = " FOR SHARE"
    # (typed: bound on the server, a bare parameter compared with NULL has none)
    credential_param = "%(credential)s::varchar"
    # The last step of an erasure (``forgetting``): waits for the writes under way,
    # holds back new ones (of any owner) while it runs; reads go on.
    erasure_lock = "LOCK TABLE {table} IN SHARE ROW EXCLUSIVE MODE"

    def __init__(self) -> None:
        super().__init__()
        notify, first = notify_if_followed("c.id"), notify_if_followed("first.chronicum_id")
        batch, one = self.render(_INSERT), self.render(_INSERT_ONE)
        self.writes = {
            name: self.render(text, notify=notify, first_notify=first, insert=batch)
            for name, text in (
                ("append", APPEND),
                ("creating", APPEND_CREATING),
                ("keyed", APPEND_KEYED),
                ("keyed creating", APPEND_KEYED_CREATING),
            )
        }
        self.writes["redact"] = (
            f"WITH r AS ({self.statement('REDACT')})"
            f" SELECT r.*, pg_notify('{NOTIFY_CHANNEL}', %(chronicum_id)s) FROM r"
        )
        # One actum without a key, with a credential and without one (then only the
        # erasure's half of sql.CREDENTIAL_OK: the credential's is true).
        not_erasing = sql.NOT_ERASING.format(**self.tables)
        for name, text in (("append", APPEND), ("creating", APPEND_CREATING)):
            self.writes[name + " one"] = self.render(text, notify=notify, insert=one)
            self.writes[name + " one uncredentialed"] = self.render(
                text, notify=notify, insert=one, credential_ok=not_erasing
            )

    def cursor(self, connection: BaseDatabaseWrapper) -> Any:
        # Times read with psycopg's own ``timestamptz`` loader (its C one), on this
        # cursor only: Django's is a Python subclass of it (~6 µs a value against
        # ~0.3), which the ORM needs and chronica does not (``rows.utc`` makes any
        # aware time UTC). psycopg2 loads times in C already.
        cursor = connection.cursor()
        adapters = getattr(cursor.cursor, "adapters", None)  # (psycopg 3's cursors')
        if adapters is not None:
            adapters.register_loader("timestamptz", TimestamptzLoader)
        return cursor

    def octets(self, column: str) -> str:
        return f"octet_length({column})"

    def data_octets(self, column: str) -> str:
        # jsonb prints ", " and ": " between tokens; the compact text (the API's) has
        # none. Those in strings go too: at worst an undercount, which the API makes
        # good by counting what it sends.
        text = f"{column}::text"
        return f"COALESCE(octet_length(replace(replace({text}, ', ', ','), ': ', ':')), 0)"

    def append(
        self,
        connection: BaseDatabaseWrapper,
        owner_id: str | None,
        chronicum_id: str,
        acta: Sequence[Actum],
        key: str | None,
        tokens: Sequence[int | None],
        create: Create | None,
        credential: str | None = None,
    ) -> Recorded | None:
        params: dict[str, Any] = {
            "chronicum_id": chronicum_id,
            "owner_id": owner_id,
            "credential": credential,
            "erasing": owner_id,  # (sql.CREDENTIAL_OK: no erasure of the owner under way)
        }
        with self.cursor(connection) as cursor:
            if key is None:
                write = "creating" if create == "missing" and owner_id is not None else "append"
                if len(acta) == 1:
                    params.update(one_row(acta[0], tokens[0]))
                    write += " one" if credential is not None else " one uncredentialed"
                else:
                    params["acta"] = batch_json(acta, tokens, key)
                cursor.execute(self.writes[write], params)
                row = cursor.fetchone()
                if row is None:
                    self.check_credential(connection, cursor, credential)
                    return None
                return Recorded(stamped(acta, row[0]))
            params["acta"] = batch_json(acta, tokens, key)
            for _attempt in range(WRITE_ATTEMPTS):
                cursor.execute(self.writes["keyed"], params)
                at, found, _notified = cursor.fetchone()
                if at is not None:
                    return Recorded(stamped(acta, at))
                if found:
                    # The key was used: the batch stored the first time, if it is still
                    # there and still this owner's; if not, write again.
                    replay = self.replay(cursor, owner_id, chronicum_id, key)
                    if replay:
                        return Recorded(replay, replayed=True)
                    continue
                self.check_credential(connection, cursor, credential)
                if create != "missing" or owner_id is None:
                    return None
                cursor.execute(self.writes["keyed creating"], params)
                row = cursor.fetchone()
                if row is not None:
                    return Recorded(stamped(acta, row[0]))
        return None

    def deleted(self, cursor: Any, chronicum_id: str) -> None:
        cursor.execute(PG_NOTIFY, [NOTIFY_CHANNEL, chronicum_id])

    def redact(self, connection: BaseDatabaseWrapper, params: dict[str, Any]) -> list[Any]:
        # One statement (no transaction of three more round trips): the NOTIFY goes out
        # at its commit, with the actum emptied, only where one was.
        with self.cursor(connection) as cursor:
            cursor.execute(self.writes["redact"], params)
            rows: list[Any] = cursor.fetchall()
        return rows

    def subscribe(self, alias: str, chronicum_id: str) -> Subscription | None:
        from ..listener import listen

        return listen(alias, chronicum_id)

    searches = True

    def search(
        self,
        config: str,
        owner_id: str,
        query: SearchQuery,
        wanted: ActaQuery,
        chronica: frozenset[str] | None,
        limit: int,
        offset: int,
        namespace: str | None = None,
    ) -> SearchRead:
        """Full-text search with ``config``, the expression of the index (``search.vector``)
        compared with the query's ``websearch_to_tsquery``; ``ts_rank_cd``, ``ts_headline``."""
        (text, params), hits = search.search_statement(
            search.PG_SEARCH,
            self.tables,
            owner_id,
            query,
            wanted,
            chronica,
            limit,
            offset,
            namespace,
            config=config,
            vector=search.vector(config, "a."),
            document=search.document("a."),
            tsquery=search.tsquery(config),
        )
        params.update(query=query.websearch(), headline=search.HEADLINE)
        return (text, params), hits

    def matching(self, config: str, query: SearchQuery) -> tuple[str, list[Any]]:
        where = search.vector(config).replace("%", "%%")
        return (
            f"SELECT seq FROM {self.tables['acta']} WHERE {where}"
            f" @@ websearch_to_tsquery('{config}'::regconfig, %s)",
            [query.websearch()],
        )
