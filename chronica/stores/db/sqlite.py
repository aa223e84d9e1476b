"""SQLite's dialect: a write is one transaction that starts with a write, and a writer
that waits its turn.

SQLite has one write lock for the whole database. Every write of chronica's starts
its transaction with a write (the upsert of the chronicum's row), so it takes that lock
before it reads: concurrent writers queue on the busy timeout instead of deadlocking,
with Django's default options (no special ``transaction_mode``). Holding the lock, it
knows whether its key was used (in the same statement) and then inserts the batch,
read from one JSON array, in one statement.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from django.db import OperationalError, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from ...errors import InvalidQuery
from ...interfaces import Create, WindowPage
from ...search import SearchQuery
from ...values import ActaQuery, Actum, Recorded
from . import search, sql
from .base import BaseDialect, SearchRead, Statement
from .rows import Row, Streamed, acta_of, batch_json, stamped

__all__ = ["SQLITE_LOCK_ATTEMPTS", "SQLiteDialect"]

# FTS5's merge of every segment of the index (``search.INDEX_NAME``).
_OPTIMIZE = "INSERT INTO acta_search(acta_search) VALUES ('optimize')"

_T = TypeVar("_T")

SQLITE_LOCK_ATTEMPTS = 6

# Whether the key of the write was used in the chronicum.
_USED = (
    "EXISTS (SELECT 1 FROM {acta} WHERE chronicum_id = %(chronicum_id)s"
    " AND idempotency_key = %(key)s)"
)
# The chronicum bumped to the write's moment (never back), unless the key was used:
# then nothing changes. Answers its last activity and whether the key was used.
_BUMP = (
    "last_activity_at = CASE WHEN " + _USED + " THEN last_activity_at"
    " ELSE MAX(last_activity_at, %(now)s) END"
)
TOUCH = (
    "UPDATE {chronica} SET " + _BUMP + " WHERE id = %(chronicum_id)s"
    " AND owner_id = COALESCE(%(owner_id)s, owner_id) AND {credential_ok}"
    " RETURNING last_activity_at, " + _USED
)
TOUCH_CREATING = (
    "INSERT INTO {chronica} (id, owner_id, started_at, last_activity_at)"
    " SELECT %(chronicum_id)s, %(owner_id)s, %(now)s, %(now)s WHERE {credential_ok}"
    " ON CONFLICT (id) DO UPDATE SET " + _BUMP + " WHERE {chronica}.owner_id = excluded.owner_id"
    " RETURNING last_activity_at, " + _USED
)
INSERT = """
INSERT INTO {acta} ({insert_columns})
SELECT json_extract(v.value, '$.id'), %(chronicum_id)s, json_extract(v.value, '$.kind'),
       json_extract(v.value, '$.actor_kind'), json_extract(v.value, '$.actor'),
       json_extract(v.value, '$.content'), %(at)s, json_extract(v.value, '$.call_id'),
       json_extract(v.value, '$.data'), json_extract(v.value, '$.tokens'),
       json_extract(v.value, '$.key'), json_extract(v.value, '$.recorded_by')
FROM json_each(%(acta)s) v ORDER BY v.key
"""


# A window with a byte budget: the chronicum's row, the owner's (with where ``before``
# stands), then its acta newest first, each with its size, straight from a backward walk
# of the (chronicum_id, seq) index, up to the limit + 1 (-1: none). SQLite hands them
# over as they are asked for: the reader keeps the budget, and the rows past the first
# actum that does not fit are never read (no sort of the candidates, their content
# included, as a window function over them would need). The chronicum's row carries
# NULL as its seq: a statement that embeds this one and sorts by seq descending has it
# last, which the reader allows.
WINDOW_READ_WITHIN_BYTES = (
    "SELECT 1 AS w_found, {{w_before}} AS w_before, NULL AS w_size, "
    + ", ".join(f"NULL AS {column}" for column in sql.ACTUM_COLUMNS)
    + ", NULL AS w_seq FROM {chronica} c"
    " WHERE c.id = %(chronicum_id)s{c_owned}"
    " UNION ALL SELECT * FROM ("
    "SELECT NULL, NULL, {size}, {columns}, seq FROM {acta}"
    " WHERE {chronicum_is} AND {owned}{{filters}}{{before}}"
    " ORDER BY chronicum_id DESC, seq DESC LIMIT %(limit)s)"
)


class SQLiteDialect(BaseDialect):
    has_on_conflict = True
    # (compaction_sql: the batch of a compaction in one statement)
    compaction_insert = "COMPACT_INSERT_SQLITE"

    def __init__(self) -> None:
        super().__init__()
        self.writes = {
            "touch": self.render(TOUCH),
            "creating": self.render(TOUCH_CREATING),
            "insert": self.render(INSERT),
        }
        self.within_bytes = {
            owned: self.render(WINDOW_READ_WITHIN_BYTES, owned=owned) for owned in (True, False)
        }

    def window(
        self, owner_id: str | None, chronicum_id: str, query: ActaQuery
    ) -> tuple[Statement, Callable[[list[tuple[Any, ...]]], WindowPage | None]]:
        """A byte budget without a token budget: ``WINDOW_READ_WITHIN_BYTES``, its rows
        read one by one until the first actum that does not fit (the newest always
        does) or the one past the limit, either of which says that an older page
        exists. Other windows as every dialect reads them."""
        max_bytes = query.max_bytes
        if max_bytes is None or query.max_tokens is not None:
            return super().window(owner_id, chronicum_id, query)
        where, params = self.filters(query)
        last_n = sql.row_limit(query.last_n)
        params.update(
            chronicum_id=chronicum_id,
            owner_id=owner_id,
            before=query.before,
            limit=-1 if last_n is None else last_n + 1,
        )
        text = self.within_bytes[owner_id is not None].format(
            filters=where, **sql.before_fields(self.tables, query.before)
        )

        def take(rows: Iterable[Row]) -> tuple[Row | None, list[Row], bool]:
            found: Row | None = None
            kept: list[Row] = []
            used, more = 0, False
            for row in rows:
                if row[0]:  # the chronicum's row
                    found = row
                    if more:
                        break
                elif not more and row[-1] is not None:  # (not a LEFT JOIN's NULLs)
                    used += row[2]
                    more = (bool(kept) and used > max_bytes) or len(kept) == last_n
                    if not more:
                        kept.append(row[3:-1])
                    elif found is not None:
                        break  # (the rows after it are never read)
            return found, kept, more

        def page(taken: tuple[Row | None, list[Row], bool]) -> WindowPage | None:
            found, kept, more = taken
            if found is None:
                return None
            if query.before is not None and found[1] is None:
                raise InvalidQuery(f"before={query.before!r} is not an actum of this chronicum")
            kept.reverse()
            return acta_of(chronicum_id, kept, raw=query.raw_data), more

        return (text, params), Streamed(take, page)

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
        creating = create == "missing" and owner_id is not None

        def write() -> Recorded | None:
            params: dict[str, Any] = {
                "chronicum_id": chronicum_id,
                "owner_id": owner_id,
                "key": key,
                "now": self.time(connection, dt.datetime.now(dt.UTC)),
                "credential": credential,
                "erasing": owner_id,  # (sql.CREDENTIAL_OK: no erasure of the owner under way)
            }
            with transaction.atomic(using=connection.alias), self.cursor(connection) as cursor:
                cursor.execute(self.writes["creating" if creating else "touch"], params)
                row = cursor.fetchone()
                if row is None:
                    self.check_credential(connection, cursor, credential)
                    return None
                at, used = row
                if used and key is not None:
                    replay = self.replay(cursor, owner_id, chronicum_id, key)
                    if replay:
                        return Recorded(replay, replayed=True)
                    # The keyed actum is gone: the batch lands again (the lock is held).
                if acta:
                    params.update(at=at, acta=batch_json(acta, tokens, key))
                    cursor.execute(self.writes["insert"], params)
                return Recorded(stamped(acta, at))

        return self.retry_when_locked(connection, write)

    searches = True

    def forget_in_index(self, connection: BaseDatabaseWrapper) -> None:
        """FTS5 deletes by adding delete markers: until its segments are merged, the index's
        pages still hold the words of acta emptied or removed. ``optimize`` merges them into
        one segment, rewriting the index, so that nothing of those acta is left in it. The
        person's forgetting calls it (a redaction, an erasure, retention), not every pop or
        delete: it rewrites the whole index, and writers wait meanwhile."""

        def optimize() -> None:
            with transaction.atomic(using=connection.alias), self.cursor(connection) as cursor:
                cursor.execute(_OPTIMIZE)

        self.retry_when_locked(connection, optimize)

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
        """FTS5: the table the triggers keep, ``MATCH`` the query in FTS5's language (each
        term a quoted string), ``bm25``, ``snippet()``. ``config`` is PostgreSQL's."""
        (text, params), hits = search.search_statement(
            search.SQLITE_SEARCH,
            self.tables,
            owner_id,
            query,
            wanted,
            chronica,
            limit,
            offset,
            namespace,
        )
        params["query"] = search.fts5_match(owner_id, query)
        return (text, params), hits

    def matching(self, config: str, query: SearchQuery) -> tuple[str, list[Any]]:
        table = search.FTS5_TABLE
        return f"SELECT rowid FROM {table} WHERE {table} MATCH %s", [search.fts5_match(None, query)]

    def retry_when_locked(self, connection: BaseDatabaseWrapper, write: Callable[[], _T]) -> _T:
        """Run ``write`` (a whole transaction of ours) again when SQLite gave up waiting
        for its write lock.

        A SQLite writer waits its turn on the busy timeout (5 s with Django's defaults);
        many writers on a loaded machine can wait longer. A transaction of our own can
        simply be tried again; inside a caller's transaction the error goes to the caller.
        """
        for attempt in range(SQLITE_LOCK_ATTEMPTS):
            try:
                return write()
            except OperationalError as exc:
                if (
                    connection.in_atomic_block
                    or "locked" not in str(exc)
                    or attempt == SQLITE_LOCK_ATTEMPTS - 1
                ):
                    raise
        raise AssertionError("unreachable")
