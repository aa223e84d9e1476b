"""``DjangoStore``: chronica on any Django database (PostgreSQL and SQLite are tested).

Every read is one SQL statement. On PostgreSQL a write, a batch included, is one
statement too; other databases write inside a transaction that starts with a
write, so SQLite writers queue on the busy timeout instead of failing with
"database is locked". Values are always passed as parameters, never formatted
into SQL.

Every write takes the chronicum's row lock before its acta get their ``seq``, and
holds it until it commits: within a chronicum, acta become visible in ``seq``
order, and a delete or a pop never races an insert.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Callable, Generator, Sequence
from typing import Any, NamedTuple, TypeVar

from django.db import (
    DEFAULT_DB_ALIAS,
    IntegrityError,
    OperationalError,
    connections,
    router,
    transaction,
)
from django.db.backends.base.base import BaseDatabaseWrapper
from django.utils.dateparse import parse_datetime

from .. import models
from ..errors import ChronicumExists, ChronicumNotFound, InvalidQuery
from ..interfaces import Subscription
from ..validation import dumps_data, loads_data
from ..values import (
    ActaQuery,
    ActorKind,
    Actum,
    ActumKind,
    Chronicum,
    Recorded,
    restamped,
    stored_actum,
)

__all__ = ["DjangoStore"]

_T = TypeVar("_T")

ACTA = models.Actum._meta.db_table
CHRONICA = models.Chronicum._meta.db_table

_KINDS = {k.value: k for k in ActumKind}
_ACTOR_KINDS = {k.value: k for k in ActorKind}

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
# PostgreSQL: `at` read as microseconds since the epoch, exact (EXTRACT gives a numeric
# since PostgreSQL 14). An int becomes a datetime in a tenth of the time Django's
# timestamptz loader, written in Python, spends parsing one (nearly half the client
# CPU of a 20-acta read).
_PG_MICROS = "(EXTRACT(EPOCH FROM {}) * 1000000)::bigint"

_FAMILIES = ("postgresql", "other")


def _family(connection: BaseDatabaseWrapper) -> str:
    """The SQL dialect chronica writes for a connection: PostgreSQL's, or the plain one."""
    return "postgresql" if connection.vendor == "postgresql" else "other"


def _at_column(vendor: str, table: str = "") -> str:
    return _PG_MICROS.format(f"{table}at") if vendor == "postgresql" else f"{table}at"


def _columns(vendor: str, table: str = "") -> str:
    """What every read selects of an actum, in the order ``_actum`` takes it."""
    t = table
    return (
        f"{t}id, {t}kind, {t}actor_kind, {t}actor, {t}content, {_at_column(vendor, t)},"
        f" {t}call_id, {t}data"
    )


_INSERT_COLUMNS = (
    "id, chronicum_id, kind, actor_kind, actor, content, at, call_id, data, tokens, idempotency_key"
)

# -- PostgreSQL writes ---------------------------------------------------------
# A write into a chronicum that some process follows sends NOTIFY on this channel,
# with the chronicum's ID as payload (never an actum's content), inside the writing
# transaction: only a commit wakes a follower, once the acta are visible.
#
# Only when followed: PostgreSQL serializes the commits of all notifying
# transactions of a database (the notification queue's lock is held until the
# commit is flushed), which halved concurrent writes in the benchmarks. A process
# that follows a chronicum holds, on its LISTEN connection, a shared advisory lock
# (_FOLLOWED, hashtext(id)). A write tries to take that lock exclusively until it
# commits: if it can, nobody follows and it sends nothing; if it cannot, it sends
# the NOTIFY. A listener gets its shared lock only once every write that sent none
# has committed, and then wakes its followers, who read those writes. (The writes
# of a chronicum are already serialized by its row lock; two chronica whose IDs
# hash alike only cost an extra NOTIFY.)
NOTIFY_CHANNEL = "chronica"
_FOLLOWED = 0x63726F6E
PG_LISTEN = f"LISTEN {NOTIFY_CHANNEL}"
PG_FOLLOW = f"SELECT pg_try_advisory_lock_shared({_FOLLOWED}, hashtext(%s))"
PG_UNFOLLOW = f"SELECT pg_advisory_unlock_shared({_FOLLOWED}, hashtext(%s))"


def _notify_if_followed(chronicum_id: str) -> str:
    """An expression (true) that sends the NOTIFY unless the write can take the
    chronicum's _FOLLOWED lock (COALESCE evaluates its arguments in order, the
    NOTIFY only when needed). pg_notify() returns void: cast, it is an empty text."""
    return (
        f"COALESCE(CASE WHEN pg_try_advisory_xact_lock({_FOLLOWED}, hashtext({chronicum_id}))"
        f" THEN true END, pg_notify('{NOTIFY_CHANNEL}', {chronicum_id})::text IS NOT NULL)"
    )


# The chronicum row is locked first (UPDATE or FOR UPDATE); the acta are inserted after
# it, so their seq is drawn only once the lock is held. A batch travels as one JSON
# array, one parameter for any batch size (one statement text); WITH ORDINALITY and
# ORDER BY n number the batch in its given order. One JSON string, not an array per
# column: with Django's client-side binding psycopg quotes a string in C but builds an
# array literal in Python, element by element (~100 us a write, even of one actum).
#
# Writes without a key call the PL/pgSQL functions of migration 0004 (the same steps:
# lock and bump, insert, NOTIFY when followed): PostgreSQL keeps their plans for the
# session, where a statement sent with Django's client-side binding is planned anew
# each time (BENCHMARKS.md: a one-actum write's time fell by half). The owner, NULL
# when the write is not owner-scoped, is checked in the same UPDATE. Each answers one
# scalar (the write's epoch microseconds, NULL when the chronicum is not found), so the
# call is "SELECT f(...)", cheaper to plan than "SELECT ... FROM f(...)".
_PG_COLUMNS = "v(id, kind, actor_kind, actor, content, call_id, data, tokens, key, n)"
_PG_BATCH = (
    "ROWS FROM (json_to_recordset(%s::json) AS (id varchar, kind varchar,"
    " actor_kind varchar, actor varchar, content text, call_id varchar, data text,"
    f" tokens bigint, key varchar)) WITH ORDINALITY AS {_PG_COLUMNS}"
)
_PG_RECORD_ACTUM = "SELECT chronica_record_actum(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
_PG_RECORD_ACTA = "SELECT chronica_record_acta(%s, %s, %s::json)"
# Where the functions are missing (tables made without migrations, pytest-django's
# --no-migrations), the same write as one statement, with the same parameters and
# answer (no row when the chronicum is not found): slower to plan, not different.
# Windows check the owner with the same statement's subquery instead of chronica_owns.
_PG_HAS_FUNCTIONS = (
    "SELECT to_regproc('chronica_record_actum') IS NOT NULL"
    " AND to_regproc('chronica_record_acta') IS NOT NULL"
    " AND to_regproc('chronica_owns') IS NOT NULL"
)
_PG_ONE = (
    "(VALUES (%s::varchar, %s::varchar, %s::varchar, %s::varchar, %s::text, %s::varchar,"
    " %s::text, %s::bigint, 1::bigint)) AS v(id, kind, actor_kind, actor, content, call_id,"
    " data, tokens, n)"
)
_PG_RECORD_STATEMENT = f"""
WITH c AS (
    UPDATE {CHRONICA} SET last_activity_at = clock_timestamp()
    WHERE id = %s AND owner_id = COALESCE(%s::varchar, owner_id)
    RETURNING id, last_activity_at
), ins AS (
    INSERT INTO {ACTA} ({_INSERT_COLUMNS})
    SELECT v.id, c.id, v.kind, v.actor_kind, v.actor, v.content, c.last_activity_at,
           v.call_id, v.data::jsonb, v.tokens, NULL
    FROM c, {{source}}
    ORDER BY v.n
)
SELECT {_PG_MICROS.format("last_activity_at")}, {_notify_if_followed("c.id")} FROM c
"""
_PG_RECORD_STATEMENTS = {
    True: _PG_RECORD_STATEMENT.format(source=_PG_ONE),
    False: _PG_RECORD_STATEMENT.format(source=_PG_BATCH),
}


class Database(NamedTuple):
    """What a plan needs to know of the database it runs on: the alias, the database's
    name (together, the key of what is known about it), and whether its connections
    prepare statements (OPTIONS ``server_side_binding`` and ``prepare_threshold``)."""

    alias: str
    name: str
    prepares: bool = False


_FUNCTIONS: dict[tuple[str, str], bool] = {}
"""Whether migration 0004's functions exist, by (alias, database name): looked up on
the first write or window of a process, since the tables cannot lose them without a
migration."""


def forget_functions() -> None:
    """Look the functions up again at the next write or window (after a migration that
    added or dropped them in this process)."""
    _FUNCTIONS.clear()


def _use_functions(database: Database, *, writing: bool) -> Plan[bool]:
    """Whether to call migration 0004's functions on ``database``: where it has them
    (looked up once a process), except for a write where the connections prepare
    statements: a prepared write is planned once a connection, and then runs faster
    than the function (a window's owner check is faster with the function either way;
    BENCHMARKS.md)."""
    if writing and database.prepares:
        return False
    key = (database.alias, database.name)
    functions = _FUNCTIONS.get(key)
    if functions is None:
        found = yield _PG_HAS_FUNCTIONS, []
        functions = _FUNCTIONS[key] = bool(found[0][0])
    return functions


# With a key: the first actum carries it, and the rest are inserted only from the
# first's result, so a key already used (ON CONFLICT) writes nothing at all.
_PG_RECORD_KEYED = f"""
WITH c AS (
    SELECT id FROM {CHRONICA} WHERE id = %s{{owner}} FOR UPDATE
), first AS (
    INSERT INTO {ACTA} ({_INSERT_COLUMNS})
    SELECT %s, c.id, %s, %s, %s, %s, clock_timestamp(), %s, %s::jsonb, %s, %s FROM c
    ON CONFLICT (chronicum_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING chronicum_id, at
), rest AS (
    INSERT INTO {ACTA} ({_INSERT_COLUMNS})
    SELECT v.id, first.chronicum_id, v.kind, v.actor_kind, v.actor, v.content, first.at,
           v.call_id, v.data::jsonb, v.tokens, v.key
    FROM first, {_PG_BATCH}
    ORDER BY v.n
), upd AS (
    UPDATE {CHRONICA} SET last_activity_at = first.at FROM first
    WHERE {CHRONICA}.id = first.chronicum_id
)
SELECT (SELECT {_PG_MICROS.format("at")} FROM first), EXISTS (SELECT 1 FROM c),
       (SELECT {_notify_if_followed("first.chronicum_id")} FROM first)
"""
_OWNER = " AND owner_id = %s"
_PG_RECORDS_KEYED = {
    owned: _PG_RECORD_KEYED.format(owner=_OWNER if owned else "") for owned in (False, True)
}

# -- every database ------------------------------------------------------------
# PostgreSQL and SQLite (3.24 and later) both have ON CONFLICT.
_CREATE = (
    f"INSERT INTO {CHRONICA} (id, owner_id, started_at, last_activity_at)"
    " VALUES (%s, %s, %s, %s) ON CONFLICT (id) DO NOTHING"
)
_GET = f"SELECT owner_id, started_at, last_activity_at FROM {CHRONICA} WHERE id = %s"
_EXISTS = f"SELECT 1 FROM {CHRONICA} WHERE id = %s"
_EXISTS_OWNED = f"SELECT 1 FROM {CHRONICA} WHERE id = %s AND owner_id = %s"
_ACTUM_EXISTS = f"SELECT 1 FROM {ACTA} WHERE chronicum_id = %s AND id = %s"
_OWNED = f"(SELECT 1 FROM {CHRONICA} WHERE id = %s AND owner_id = %s)"
# The batch a key recorded: the keyed actum and "<key>\n<position>" for the rest.
_BY_KEY = {
    family: f"SELECT {_columns(family)} FROM {ACTA} WHERE chronicum_id = %s"
    " AND (idempotency_key = %s OR substr(idempotency_key, 1, %s) = %s) ORDER BY seq"
    for family in _FAMILIES
}
_BY_SEQ = {family: f"SELECT {_columns(family)} FROM {ACTA} WHERE seq = %s" for family in _FAMILIES}
_TOUCH = f"UPDATE {CHRONICA} SET last_activity_at = last_activity_at WHERE id = %s"
_TOUCH_OWNED = _TOUCH + _OWNER
_INSERT = (
    f"INSERT INTO {ACTA} ({_INSERT_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
_LOCK = {
    # A write first, so that SQLite takes its write lock before it reads.
    "other": f"UPDATE {CHRONICA} SET last_activity_at = last_activity_at"
    " WHERE id = %s AND owner_id = %s",
    "postgresql": f"SELECT 1 FROM {CHRONICA} WHERE id = %s AND owner_id = %s FOR UPDATE",
}
# PostgreSQL hands the times over as epoch microseconds, as windows read ``at``:
# Django's timestamptz loader is Python (a 100-row page: 2.1 -> 1.0 ms).
_LIST = {
    family: (
        f"SELECT id, owner_id, {times} FROM {CHRONICA} WHERE owner_id = %s"
        " ORDER BY last_activity_at DESC, id LIMIT %s"
    )
    for family, times in (
        (
            "postgresql",
            f"{_PG_MICROS.format('started_at')}, {_PG_MICROS.format('last_activity_at')}",
        ),
        ("other", "started_at, last_activity_at"),
    )
}
# The first condition lets the index seek to the page's start; the second settles ties.
_LIST_AFTER = {
    family: sql.replace(
        " ORDER BY", " AND last_activity_at <= %s AND (last_activity_at < %s OR id > %s) ORDER BY"
    )
    for family, sql in _LIST.items()
}
_NEWEST_SEQ = (
    f"SELECT seq FROM {ACTA} WHERE chronicum_id >= %s AND chronicum_id <= %s"
    " ORDER BY chronicum_id DESC, seq DESC LIMIT 1"
)


# -- following ------------------------------------------------------------------
_POSITION_NOW = f"SELECT {_OWNED}, ({_NEWEST_SEQ})"
_POSITION_OF = f"SELECT {_OWNED}, (SELECT MAX(seq) FROM {ACTA} WHERE chronicum_id = %s AND id = %s)"


Statement = tuple[str, Sequence[Any]]
Plan = Generator[Statement, list[tuple[Any, ...]], _T]
"""The statements of one store call, each sent the rows of the one before, returning
the call's result: the same plan runs on a Django cursor and on psycopg's async one.
Every statement of a plan returns rows (run_plan does not ask the cursor for its
description, which psycopg builds column by column)."""


def run_plan(cursor: Any, plan: Plan[_T]) -> _T:
    """Run ``plan`` on a DB-API cursor and return its result."""
    rows: list[tuple[Any, ...]] | None = None
    try:
        while True:
            sql, params = plan.send(rows)  # type: ignore[arg-type]
            cursor.execute(sql, params)
            rows = cursor.fetchall()
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def _utc(value: Any) -> dt.datetime:
    # PostgreSQL hands back aware datetimes (or epoch microseconds where we ask for
    # them); SQLite a string; MySQL a naive UTC datetime.
    if isinstance(value, int):
        return _EPOCH + dt.timedelta(0, 0, value)
    if isinstance(value, str):
        value = parse_datetime(value)
    if value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)  # type: ignore[no-any-return]
    return value.astimezone(dt.UTC)  # type: ignore[no-any-return]


def _actum(chronicum_id: str, row: Sequence[Any]) -> Actum:
    data = row[7]
    return stored_actum(
        chronicum_id,
        _KINDS[row[1]],
        _ACTOR_KINDS[row[2]],
        row[3],
        row[4],
        row[0],
        _utc(row[5]),
        row[6],
        None if data is None else loads_data(data),
    )


def _member_keys(key: str | None, count: int) -> list[str | None]:
    """The idempotency key column of each actum of a batch: the key on the first,
    ``<key>\\n<position>`` on the others (a key never holds a newline)."""
    keys: list[str | None] = [None] * count
    if key is not None:
        keys = [key, *(f"{key}\n{i}" for i in range(1, count))]
    return keys


def _estimate_sql(vendor: str, table: str = "") -> str:
    """The database's estimate of an actum that was stored without a token count: the
    default counter's formula, ``4 + ceil(UTF-8 bytes of content / 3.5)``."""
    content = f"{table}content"
    size = (
        f"octet_length({content})" if vendor == "postgresql" else f"length(CAST({content} AS BLOB))"
    )
    return f"(4 + (2 * {size} + 6) / 7)"


@dataclasses.dataclass(frozen=True)
class _Where:
    """The conditions every window statement shares: this chronicum, the filters,
    ``before``, and optionally the owner's check."""

    sql: str
    params: list[Any]


def _window_conditions(
    chronicum_id: str,
    query: ActaQuery,
    owner_id: str | None,
    *,
    with_owner: bool = True,
    functions: bool = False,
) -> _Where:
    # A range and a two-column ORDER BY, not "chronicum_id = %s ORDER BY seq": with the
    # equality PostgreSQL may walk the primary key backwards and filter, reading every
    # newer actum of every other chronicum (0.3 s on a 100k session under a 1M one).
    # Only the (chronicum_id, seq) index can serve this order; a test EXPLAINs it.
    where = ["chronicum_id >= %s AND chronicum_id <= %s"]
    params: list[Any] = [chronicum_id, chronicum_id]
    for column, values in (("kind", query.kinds), ("actor_kind", query.actor_kinds)):
        if values:
            where.append(f"{column} IN ({', '.join(['%s'] * len(values))})")
            params.extend(sorted(str(v) for v in values))
    if query.before is not None:
        where.append(f"seq < (SELECT MIN(seq) FROM {ACTA} WHERE chronicum_id = %s AND id = %s)")
        params += [chronicum_id, query.before]
    if owner_id is not None and with_owner:
        # chronica_owns (PostgreSQL, migration 0004) runs once, in front of the scan, on
        # the plan it keeps for the session: the subquery was half of the planning.
        where.append("chronica_owns(%s, %s)" if functions else f"EXISTS {_OWNED}")
        params += [chronicum_id, owner_id]
    return _Where(" AND ".join(where), params)


def _limit(last_n: int) -> int | None:
    # A limit beyond any BIGINT is no limit; the database would refuse it as out of range.
    return last_n if 0 < last_n < 2**63 else None


def window_sql(
    chronicum_id: str,
    query: ActaQuery,
    owner_id: str | None = None,
    *,
    vendor: str,
    functions: bool = False,
) -> tuple[str, list[Any]]:
    """The context window in one statement: the newest acta that pass the filters, up
    to the limit and the token budget, newest first (the caller turns them back).
    Given ``owner_id``, no actum is read unless the chronicum is that owner's (checked
    by ``chronica_owns`` when ``functions``: PostgreSQL with migration 0004's functions)."""
    where = _window_conditions(chronicum_id, query, owner_id, functions=functions)
    limit = _limit(query.last_n)
    if query.max_tokens is None:
        # Simpler than a join with the chronicum (which would tell a missing chronicum
        # from an empty window in the same statement): planning it costs PostgreSQL
        # ~20 us less. Only an empty window pays a second, tiny query.
        sql = (
            f"SELECT {_columns(vendor)} FROM {ACTA} WHERE {where.sql}"
            f" ORDER BY chronicum_id DESC, seq DESC{' LIMIT %s' if limit else ''}"
        )
        return sql, where.params + ([limit] if limit else [])
    # A budget: walk back from the newest actum one index probe at a time, keeping a
    # running sum, and stop at the first actum that does not fit (or at last_n). The
    # time grows with the window, not with the chronicum.
    step = _window_conditions(chronicum_id, query, owner_id, with_owner=False)
    count = f"COALESCE(a.tokens, {_estimate_sql(vendor, 'a.')})"
    sql = f"""
WITH RECURSIVE w(seq, running, n) AS (
    SELECT a.seq, {count}, 1 FROM {ACTA} a WHERE a.seq = (
        SELECT seq FROM {ACTA} WHERE {where.sql}
        ORDER BY chronicum_id DESC, seq DESC LIMIT 1)
    UNION ALL
    SELECT a.seq, w.running + {count}, w.n + 1 FROM w JOIN {ACTA} a ON a.seq = (
        SELECT seq FROM {ACTA} WHERE {step.sql} AND seq < w.seq
        ORDER BY chronicum_id DESC, seq DESC LIMIT 1)
    WHERE w.running <= %s{" AND w.n < %s" if limit else ""}
)
SELECT {_columns(vendor, "a.")}
FROM w JOIN {ACTA} a ON a.seq = w.seq WHERE w.running <= %s ORDER BY w.seq DESC
"""
    params = [*where.params, *step.params, query.max_tokens]
    if limit:
        params.append(limit)
    params.append(query.max_tokens)
    return sql, params


SQLITE_LOCK_ATTEMPTS = 6


def retry_when_locked(connection: BaseDatabaseWrapper, write: Callable[[], _T]) -> _T:
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
                connection.vendor != "sqlite"
                or connection.in_atomic_block
                or "locked" not in str(exc)
                or attempt == SQLITE_LOCK_ATTEMPTS - 1
            ):
                raise
    raise AssertionError("unreachable")


def _get_plan(chronicum_id: str) -> Plan[Chronicum]:
    rows = yield _GET, [chronicum_id]
    if not rows:
        raise ChronicumNotFound(chronicum_id)
    owner_id, started_at, last_activity_at = rows[0]
    return Chronicum(chronicum_id, owner_id, _utc(started_at), _utc(last_activity_at))


def _acta_plan(
    chronicum_id: str,
    query: ActaQuery,
    owner_id: str | None,
    vendor: str,
    database: Database,
) -> Plan[list[Actum] | None]:
    functions = (
        owner_id is not None
        and vendor == "postgresql"
        and (yield from _use_functions(database, writing=False))
    )
    rows = yield window_sql(chronicum_id, query, owner_id, vendor=vendor, functions=functions)
    if not rows:
        # An empty window, or no such chronicum (of this owner)?
        if owner_id is None:
            found = yield _EXISTS, [chronicum_id]
        else:
            found = yield _EXISTS_OWNED, [chronicum_id, owner_id]
        if not found:
            if owner_id is None:
                raise ChronicumNotFound(chronicum_id)
            return None
        if query.before is not None and not (yield _ACTUM_EXISTS, [chronicum_id, query.before]):
            raise InvalidQuery(f"before={query.before!r} is not an actum of this chronicum")
        return []
    rows.reverse()
    return [_actum(chronicum_id, row) for row in rows]


def _batch_of_plan(chronicum_id: str, key: str | None, family: str) -> Plan[list[Actum]]:
    """The acta a keyed write stored, still there, in write order; [] if none."""
    if key is None:
        return []
    prefix = key + "\n"
    rows = yield _BY_KEY[family], [chronicum_id, key, len(prefix), prefix]
    return [_actum(chronicum_id, row) for row in rows]


_ACTUM_PARAMS = ("id", "kind", "actor_kind", "actor", "content", "call_id", "data", "tokens")


def _actum_params(actum: Actum, tokens: int | None) -> list[Any]:
    """One actum's columns as the PostgreSQL writes take them, in the order of
    ``_ACTUM_PARAMS`` (data as JSON text)."""
    return [
        actum.id,
        actum.kind.value,
        actum.actor_kind.value,
        actum.actor,
        actum.content,
        actum.call_id,
        None if actum.data is None else dumps_data(actum.data),
        tokens,
    ]


def _batch_json(
    acta: Sequence[Actum], keys: Sequence[str | None] | None, tokens: Sequence[int | None]
) -> str:
    """The batch as the JSON array the PostgreSQL statement reads, one object an actum
    (with each one's idempotency key when ``keys`` are given)."""
    objects = [
        dict(zip(_ACTUM_PARAMS, _actum_params(a, count), strict=True))
        for a, count in zip(acta, tokens, strict=True)
    ]
    if keys is not None:
        for obj, key in zip(objects, keys, strict=True):
            obj["key"] = key
    return json.dumps(
        objects,
        ensure_ascii=False,
        separators=(",", ":"),
    )


def _pg_record_plan(
    acta: Sequence[Actum],
    key: str | None,
    tokens: Sequence[int | None],
    owner_id: str | None,
    database: Database,
) -> Plan[Recorded | None]:
    """A PostgreSQL write: one statement (and, for a replay, the read of the first batch;
    once a process, the lookup of the write functions of ``database``)."""
    chronicum_id = acta[0].chronicum_id
    functions = key is None and (yield from _use_functions(database, writing=True))
    if key is None and len(acta) == 1:
        sql = _PG_RECORD_ACTUM if functions else _PG_RECORD_STATEMENTS[True]
        params: list[Any] = [chronicum_id, owner_id, *_actum_params(acta[0], tokens[0])]
    elif key is None:
        sql = _PG_RECORD_ACTA if functions else _PG_RECORD_STATEMENTS[False]
        params = [chronicum_id, owner_id, _batch_json(acta, None, tokens)]
    else:
        sql = _PG_RECORDS_KEYED[owner_id is not None]
        params = [
            chronicum_id,
            *([] if owner_id is None else [owner_id]),
            *_actum_params(acta[0], tokens[0]),
            key,
            _batch_json(acta[1:], _member_keys(key, len(acta))[1:], tokens[1:]),
        ]
    rows = yield sql, params
    if key is None:
        # The write's epoch microseconds; NULL (the function) or no row (the statement)
        # when the chronicum is not found (of this owner).
        if not rows or rows[0][0] is None:
            return None
    elif not rows[0][1]:
        return None  # no such chronicum (of this owner)
    elif rows[0][0] is None:
        # The key was used: the batch stored the first time.
        replay = yield from _batch_of_plan(chronicum_id, key, "postgresql")
        return Recorded(replay, replayed=True)
    at = _utc(rows[0][0])
    return Recorded([restamped(a, a.id, at) for a in acta])


def _position_plan(owner_id: str, chronicum_id: str, after: str | None) -> Plan[int | None]:
    owned = [chronicum_id, owner_id]
    if after is None:
        rows = yield _POSITION_NOW, [*owned, chronicum_id, chronicum_id]
    else:
        rows = yield _POSITION_OF, [*owned, chronicum_id, after]
    found, seq = rows[0]
    if found is None:
        return None
    if after is not None and seq is None:
        raise InvalidQuery(f"after={after!r} is not an actum of this chronicum")
    return int(seq or 0)


def _after_sql(query: ActaQuery, vendor: str) -> str:
    filters = "".join(
        f" AND {column} IN ({', '.join(['%s'] * len(values))})"
        for column, values in (("kind", query.kinds), ("actor_kind", query.actor_kinds))
        if values
    )
    # The row comparison is where the (chronicum_id, seq) index scan starts, however
    # long the chronicum; the horizon (the newest seq) is read in the same statement,
    # so with the same snapshot as the page.
    return f"""
SELECT o.owned, o.top, {_columns(vendor, "p.")}, p.seq
FROM (SELECT {_OWNED} AS owned, ({_NEWEST_SEQ}) AS top) o
LEFT JOIN (
    SELECT seq, id, kind, actor_kind, actor, content, at, call_id, data FROM {ACTA}
    WHERE (chronicum_id, seq) > (%s, %s) AND chronicum_id <= %s{filters}
      AND EXISTS {_OWNED}
    ORDER BY chronicum_id, seq LIMIT %s
) p ON 1 = 1
ORDER BY p.seq
"""


def _after_plan(
    owner_id: str, chronicum_id: str, query: ActaQuery, position: int, limit: int, vendor: str
) -> Plan[tuple[list[Actum], int] | None]:
    params: list[Any] = [chronicum_id, owner_id, chronicum_id, chronicum_id]
    params += [chronicum_id, position, chronicum_id]
    for values in (query.kinds, query.actor_kinds):
        params.extend(sorted(str(v) for v in values))
    params += [chronicum_id, owner_id, limit]
    rows = yield _after_sql(query, vendor), params
    if not rows or rows[0][0] is None:
        return None
    acta = [_actum(chronicum_id, row[2:10]) for row in rows if row[10] is not None]
    if len(acta) >= limit:
        return acta, int(rows[-1][10])
    # Every actum up to the horizon was read, the filtered-out ones included.
    return acta, max(position, int(rows[0][1] or 0))


class DjangoStore:
    """A chronica store on the Django database ``using`` (by default the database the
    routers choose for writing chronica), with every capability of
    ``chronica.interfaces``."""

    supports_windows = True

    def __init__(self, using: str | None = None) -> None:
        self.using = using

    def __repr__(self) -> str:
        return f"<DjangoStore using={self.using!r}>"

    @property
    def alias(self) -> str:
        return self.using or router.db_for_write(models.Chronicum) or DEFAULT_DB_ALIAS

    def _connection(self) -> BaseDatabaseWrapper:
        connection = connections[self.alias]
        # A worker outside the request cycle never gets Django's clean-up of a
        # broken connection: drop it here so that the next call reconnects.
        if (
            connection.errors_occurred
            and connection.connection is not None
            and not connection.in_atomic_block
        ):
            if connection.is_usable():
                connection.errors_occurred = False
            else:
                connection.close()
        return connection

    def _database(self, connection: BaseDatabaseWrapper | None = None) -> Database:
        """What the plans need to know of this store's database (``connection``'s)."""
        connection = connections[self.alias] if connection is None else connection
        settings = connection.settings_dict
        options = settings.get("OPTIONS") or {}
        prepares = (
            options.get("server_side_binding") is True
            and options.get("prepare_threshold") is not None
        )
        return Database(connection.alias, str(settings["NAME"]), prepares)

    def on_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` when the caller's transaction commits (now, if there is none)."""
        transaction.on_commit(callback, using=self.alias)

    # -- Store ----------------------------------------------------------------

    def create(self, chronicum: Chronicum) -> None:
        connection = self._connection()
        if connection.vendor not in ("postgresql", "sqlite"):
            self._create_other(connection, chronicum)
            return
        # One statement that creates or finds the ID taken: no IntegrityError, which a
        # delete of the taking chronicum right after it would leave unexplained.
        params = [
            chronicum.id,
            chronicum.owner_id,
            self._datetime_param(connection, chronicum.started_at),
            self._datetime_param(connection, chronicum.last_activity_at),
        ]

        def insert() -> int:
            with connection.cursor() as cursor:
                cursor.execute(_CREATE, params)
                return int(cursor.rowcount)

        if retry_when_locked(connection, insert) == 0:
            raise ChronicumExists(chronicum.id)

    @staticmethod
    def _create_other(connection: BaseDatabaseWrapper, chronicum: Chronicum) -> None:
        """``create`` on a database with no ``ON CONFLICT``: the ORM's insert."""

        def insert() -> None:
            with transaction.atomic(using=connection.alias):
                models.Chronicum.objects.using(connection.alias).create(
                    id=chronicum.id,
                    owner_id=chronicum.owner_id,
                    started_at=chronicum.started_at,
                    last_activity_at=chronicum.last_activity_at,
                )

        for _attempt in range(SQLITE_LOCK_ATTEMPTS):
            try:
                retry_when_locked(connection, insert)
                return
            except IntegrityError:
                if (
                    models.Chronicum.objects.using(connection.alias)
                    .filter(pk=chronicum.id)
                    .exists()
                ):
                    raise ChronicumExists(chronicum.id) from None
                # The chronicum that took the ID was deleted since: try again.
        raise ChronicumExists(chronicum.id)

    def get(self, chronicum_id: str) -> Chronicum:
        with self._connection().cursor() as cursor:
            return run_plan(cursor, _get_plan(chronicum_id))

    def record(self, actum: Actum) -> Actum:
        return self.record_batch([actum], None, [None]).acta[0]

    def record_idempotent(self, actum: Actum, key: str) -> Actum:
        return self.record_batch([actum], key, [None]).acta[0]

    def acta(self, chronicum_id: str, query: ActaQuery) -> list[Actum]:
        acta = self._acta(chronicum_id, query, None)
        assert acta is not None
        return acta

    # -- capabilities ---------------------------------------------------------

    def record_batch(
        self, acta: Sequence[Actum], key: str | None, tokens: Sequence[int | None]
    ) -> Recorded:
        recorded = self._record(acta, key, tokens, None)
        if recorded is None:
            raise ChronicumNotFound(acta[0].chronicum_id)
        return recorded

    def record_batch_if_owner(
        self,
        owner_id: str,
        acta: Sequence[Actum],
        key: str | None,
        tokens: Sequence[int | None],
    ) -> Recorded | None:
        """``record_batch``, done only if the chronicum exists and belongs to
        ``owner_id``; otherwise ``None`` and nothing is written."""
        return self._record(acta, key, tokens, owner_id)

    def acta_if_owner(
        self, owner_id: str, chronicum_id: str, query: ActaQuery
    ) -> list[Actum] | None:
        """``acta``, read only if the chronicum exists and belongs to ``owner_id``;
        otherwise ``None`` and no actum is read."""
        return self._acta(chronicum_id, query, owner_id)

    def list_chronica(self, owner_id: str, limit: int, after: Chronicum | None) -> list[Chronicum]:
        connection = self._connection()
        params: list[Any] = [owner_id]
        if after is not None:
            at = self._datetime_param(connection, after.last_activity_at)
            params += [at, at, after.id]
        params.append(limit)
        with connection.cursor() as cursor:
            cursor.execute((_LIST if after is None else _LIST_AFTER)[_family(connection)], params)
            rows = cursor.fetchall()
        return [Chronicum(row[0], row[1], _utc(row[2]), _utc(row[3])) for row in rows]

    def delete(self, chronicum_id: str, owner_id: str) -> None:
        connection = self._connection()

        def delete() -> None:
            with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
                self._lock(connection, cursor, chronicum_id, owner_id)
                cursor.execute(f"DELETE FROM {ACTA} WHERE chronicum_id = %s", [chronicum_id])
                cursor.execute(f"DELETE FROM {CHRONICA} WHERE id = %s", [chronicum_id])
                if connection.vendor == "postgresql":
                    cursor.execute("SELECT pg_notify(%s, %s)", [NOTIFY_CHANNEL, chronicum_id])

        retry_when_locked(connection, delete)

    def pop(self, chronicum_id: str, owner_id: str) -> Actum | None:
        connection = self._connection()

        def pop() -> Actum | None:
            with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
                # Under the chronicum's lock, and in a statement of its own, so that a pop
                # that waited for another sees what that one left.
                self._lock(connection, cursor, chronicum_id, owner_id)
                cursor.execute(_NEWEST_SEQ, [chronicum_id, chronicum_id])
                newest = cursor.fetchone()
                if newest is None:
                    return None
                cursor.execute(_BY_SEQ[_family(connection)], [newest[0]])
                row = cursor.fetchone()
                cursor.execute(f"DELETE FROM {ACTA} WHERE seq = %s", [newest[0]])
            return _actum(chronicum_id, row)

        return retry_when_locked(connection, pop)

    # -- following --------------------------------------------------------------

    def follow_position(self, owner_id: str, chronicum_id: str, after: str | None) -> int | None:
        """The seq of the actum ``after``, or the newest seq now; ``None`` if the
        chronicum is missing or not ``owner_id``'s."""
        with self._connection().cursor() as cursor:
            return run_plan(cursor, _position_plan(owner_id, chronicum_id, after))

    def acta_after(
        self, owner_id: str, chronicum_id: str, query: ActaQuery, position: int, limit: int
    ) -> tuple[list[Actum], int] | None:
        """The acta after seq ``position`` that pass the filters, and the seq to read
        from next (see ``FollowingStore``), in one statement."""
        connection = self._connection()
        plan = _after_plan(owner_id, chronicum_id, query, position, limit, connection.vendor)
        with connection.cursor() as cursor:
            return run_plan(cursor, plan)

    def subscribe(self, chronicum_id: str) -> Subscription | None:
        """On PostgreSQL, wake-ups from this process's one LISTEN connection; elsewhere
        ``None`` (followers poll)."""
        if connections[self.alias].vendor != "postgresql":
            return None
        from ..follow import listen

        return listen(self.alias, chronicum_id)

    # -- the asyncio path (PostgreSQL) -------------------------------------------

    def supports_async(self) -> bool:
        """On PostgreSQL with psycopg_pool installed, the ``a*`` methods run the same
        plans on psycopg's async connections (``chronica.stores.pg_async``)."""
        from . import pg_async

        return connections[self.alias].vendor == "postgresql" and pg_async.available()

    async def aget(self, chronicum_id: str) -> Chronicum:
        return await self._arun(_get_plan(chronicum_id))

    async def arecord_batch_if_owner(
        self,
        owner_id: str,
        acta: Sequence[Actum],
        key: str | None,
        tokens: Sequence[int | None],
    ) -> Recorded | None:
        return await self._arun(_pg_record_plan(acta, key, tokens, owner_id, self._database()))

    async def aacta_if_owner(
        self, owner_id: str, chronicum_id: str, query: ActaQuery
    ) -> list[Actum] | None:
        plan = _acta_plan(chronicum_id, query, owner_id, "postgresql", self._database())
        return await self._arun(plan)

    async def afollow_position(
        self, owner_id: str, chronicum_id: str, after: str | None
    ) -> int | None:
        return await self._arun(_position_plan(owner_id, chronicum_id, after))

    async def aacta_after(
        self, owner_id: str, chronicum_id: str, query: ActaQuery, position: int, limit: int
    ) -> tuple[list[Actum], int] | None:
        plan = _after_plan(owner_id, chronicum_id, query, position, limit, "postgresql")
        return await self._arun(plan)

    async def _arun(self, plan: Plan[_T]) -> _T:
        from . import pg_async

        return await pg_async.run(self.alias, plan)

    # -- reading ----------------------------------------------------------------

    def _acta(
        self, chronicum_id: str, query: ActaQuery, owner_id: str | None
    ) -> list[Actum] | None:
        connection = self._connection()
        plan = _acta_plan(
            chronicum_id, query, owner_id, connection.vendor, self._database(connection)
        )
        with connection.cursor() as cursor:
            return run_plan(cursor, plan)

    # -- writing ----------------------------------------------------------------

    def _record(
        self,
        acta: Sequence[Actum],
        key: str | None,
        tokens: Sequence[int | None],
        owner_id: str | None,
    ) -> Recorded | None:
        connection = self._connection()
        if connection.vendor == "postgresql":
            return self._record_postgres(connection, acta, key, tokens, owner_id)
        return retry_when_locked(
            connection, lambda: self._record_other(connection, acta, key, tokens, owner_id)
        )

    def _record_postgres(
        self,
        connection: BaseDatabaseWrapper,
        acta: Sequence[Actum],
        key: str | None,
        tokens: Sequence[int | None],
        owner_id: str | None,
    ) -> Recorded | None:
        with connection.cursor() as cursor:
            plan = _pg_record_plan(acta, key, tokens, owner_id, self._database(connection))
            return run_plan(cursor, plan)

    def _record_other(
        self,
        connection: BaseDatabaseWrapper,
        acta: Sequence[Actum],
        key: str | None,
        tokens: Sequence[int | None],
        owner_id: str | None,
    ) -> Recorded | None:
        chronicum_id = acta[0].chronicum_id
        with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
            # Write first: the transaction takes the write lock before it reads, so
            # concurrent SQLite writers wait instead of deadlocking.
            cursor.execute(
                _TOUCH_OWNED if owner_id else _TOUCH,
                [chronicum_id, *([owner_id] if owner_id else [])],
            )
            if cursor.rowcount == 0:
                return None
            if key is not None:
                stored = run_plan(cursor, _batch_of_plan(chronicum_id, key, "other"))
                if stored:
                    return Recorded(stored, replayed=True)
            now = dt.datetime.now(dt.UTC)
            at = self._datetime_param(connection, now)
            rows = [
                (
                    a.id,
                    chronicum_id,
                    a.kind.value,
                    a.actor_kind.value,
                    a.actor,
                    a.content,
                    at,
                    a.call_id,
                    None if a.data is None else dumps_data(a.data),
                    count,
                    member_key,
                )
                for a, count, member_key in zip(
                    acta, tokens, _member_keys(key, len(acta)), strict=True
                )
            ]
            cursor.executemany(_INSERT, rows)
            cursor.execute(
                f"UPDATE {CHRONICA} SET last_activity_at = %s WHERE id = %s", [at, chronicum_id]
            )
        return Recorded([restamped(a, a.id, now) for a in acta])

    @staticmethod
    def _lock(
        connection: BaseDatabaseWrapper, cursor: Any, chronicum_id: str, owner_id: str
    ) -> None:
        """Take the chronicum's row lock (SQLite: the database's write lock), or raise
        ``ChronicumNotFound`` if it is not ``owner_id``'s."""
        cursor.execute(_LOCK[_family(connection)], [chronicum_id, owner_id])
        found = cursor.rowcount if connection.vendor != "postgresql" else len(cursor.fetchall())
        if not found:
            raise ChronicumNotFound(chronicum_id)

    @staticmethod
    def _datetime_param(connection: BaseDatabaseWrapper, value: dt.datetime) -> Any:
        """A datetime as this database's DateTimeField stores it (SQLite: naive UTC text)."""
        return connection.ops.adapt_datetimefield_value(value)
