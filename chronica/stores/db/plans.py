"""The statements of each store call, in the dialect of the database they run on.

A plan (``base.Plan``) is a generator of statements, each sent the rows of the one
before, returning the call's result: ``DjangoStore`` runs it on a Django cursor
(``base.run_plan``) and its asyncio path on psycopg's async cursor
(``chronica.stores.pg_async``), so both send the same statements. Only the writes
of a dialect that is not ``writes_in_one_statement`` are no plan: they need a
transaction of their own (``record_in_transaction``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from django.db import transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from ...errors import ChronicumNotFound, InvalidQuery
from ...validation import dumps_data
from ...values import ActaQuery, Actum, Chronicum, Recorded, restamped
from .base import BaseDialect, Database, Plan, run_plan
from .rows import acta_newest_first, actum, member_keys, utc

REPLAY_ATTEMPTS = 5
"""How often an unscoped keyed write writes again when the batch its key stored went
between the write and the replay's read."""

__all__ = [
    "acta_plan",
    "after_plan",
    "batch_of_plan",
    "get_plan",
    "position_plan",
    "record_in_transaction",
    "record_plan",
]


def get_plan(dialect: BaseDialect, chronicum_id: str) -> Plan[Chronicum]:
    rows = yield dialect.get, [chronicum_id]
    if not rows:
        raise ChronicumNotFound(chronicum_id)
    owner_id, started_at, last_activity_at = rows[0]
    return Chronicum(chronicum_id, owner_id, utc(started_at), utc(last_activity_at))


def acta_plan(
    dialect: BaseDialect,
    chronicum_id: str,
    query: ActaQuery,
    owner_id: str | None,
    database: Database,
) -> Plan[list[Actum] | None]:
    functions = owner_id is not None and (yield from dialect.use_functions(database, writing=False))
    if (
        functions
        and owner_id is not None
        and query.max_tokens is None
        and query.before is None
        and query.max_bytes is None
        and (yield from dialect.use_window_function(database))
    ):
        rows = yield dialect.window_call_statement(chronicum_id, query, owner_id)
    else:
        rows = yield dialect.window_sql(chronicum_id, query, owner_id, functions=functions)
    if not rows:
        # An empty window, or no such chronicum (of this owner)?
        if owner_id is None:
            found = yield dialect.exists, [chronicum_id]
        else:
            found = yield dialect.exists_owned, [chronicum_id, owner_id]
        if not found:
            if owner_id is None:
                raise ChronicumNotFound(chronicum_id)
            return None
        if query.before is not None and not (
            yield dialect.actum_exists, [chronicum_id, query.before]
        ):
            raise InvalidQuery(f"before={query.before!r} is not an actum of this chronicum")
        return []
    return acta_newest_first(chronicum_id, rows)


def batch_of_plan(
    dialect: BaseDialect, chronicum_id: str, key: str | None, owner_id: str | None = None
) -> Plan[list[Actum]]:
    """The acta a keyed write stored, still there, in write order; [] if none. Given
    ``owner_id``, only if the chronicum is that owner's, checked in the same statement:
    between the write that found the key used and this read, the chronicum may have been
    deleted and its ID taken by another owner who wrote with the same key."""
    if key is None:
        return []
    prefix = key + "\n"
    if owner_id is None:
        rows = yield dialect.by_key, [chronicum_id, key, len(prefix), prefix]
    else:
        params = [chronicum_id, key, len(prefix), prefix, chronicum_id, owner_id]
        rows = yield dialect.by_key_owned, params
    return [actum(chronicum_id, row) for row in rows]


def record_plan(
    dialect: BaseDialect,
    acta: Sequence[Actum],
    key: str | None,
    tokens: Sequence[int | None],
    owner_id: str | None,
    database: Database,
) -> Plan[Recorded | None]:
    """A write where the dialect ``writes_in_one_statement``: that statement (and, for a
    replay, the read of the first batch; once a process, the lookup of the write
    functions of ``database``).

    A replay is read in a statement of its own, with the owner checked again in it: if
    the batch is gone by then (popped, or deleted with its chronicum), an owner-scoped
    write answers ``None`` (the caller looks again, and creates or refuses), and an
    unscoped one writes again. A replay never answers ``[]``."""
    chronicum_id = acta[0].chronicum_id
    # An attested write calls migration 0006's functions (0004's write no recorded_by).
    attested = any(a.recorded_by is not None for a in acta)
    functions = key is None and (
        yield from dialect.use_functions(database, writing=True, attested=attested)
    )
    for _attempt in range(REPLAY_ATTEMPTS):
        rows = yield dialect.record_statement(acta, key, tokens, owner_id, functions=functions)
        if key is None:
            if not rows or rows[0][0] is None:
                return None
        elif not rows[0][1]:
            return None  # no such chronicum (of this owner)
        elif rows[0][0] is None:
            # The key was used: the batch stored the first time, if it is still there
            # and still this owner's.
            replay = yield from batch_of_plan(dialect, chronicum_id, key, owner_id)
            if replay:
                return Recorded(replay, replayed=True)
            if owner_id is not None:
                return None
            continue
        at = utc(rows[0][0])
        return Recorded([restamped(a, a.id, at) for a in acta])
    raise ChronicumNotFound(chronicum_id)


def record_in_transaction(
    dialect: BaseDialect,
    connection: BaseDatabaseWrapper,
    acta: Sequence[Actum],
    key: str | None,
    tokens: Sequence[int | None],
    owner_id: str | None,
) -> Recorded | None:
    """A write elsewhere: a transaction that writes first, so that it takes the write
    lock before it reads, and concurrent SQLite writers wait instead of deadlocking."""
    chronicum_id = acta[0].chronicum_id
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        cursor.execute(
            dialect.touch_owned if owner_id else dialect.touch,
            [chronicum_id, *([owner_id] if owner_id else [])],
        )
        if cursor.rowcount == 0:
            return None
        if key is not None:
            stored = run_plan(cursor, batch_of_plan(dialect, chronicum_id, key, owner_id))
            if stored:
                return Recorded(stored, replayed=True)
        now = dt.datetime.now(dt.UTC)
        at = connection.ops.adapt_datetimefield_value(now)
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
                a.recorded_by,
            )
            for a, count, member_key in zip(acta, tokens, member_keys(key, len(acta)), strict=True)
        ]
        cursor.executemany(dialect.insert, rows)
        cursor.execute(dialect.bump, [at, chronicum_id])
    return Recorded([restamped(a, a.id, now) for a in acta])


def position_plan(
    dialect: BaseDialect, owner_id: str, chronicum_id: str, after: str | None
) -> Plan[int | None]:
    owned = [chronicum_id, owner_id]
    if after is None:
        rows = yield dialect.position_now, [*owned, chronicum_id]
    else:
        rows = yield dialect.position_of, [*owned, chronicum_id, after]
    found, seq = rows[0]
    if found is None:
        return None
    if after is not None and seq is None:
        raise InvalidQuery(f"after={after!r} is not an actum of this chronicum")
    return int(seq or 0)


def after_plan(
    dialect: BaseDialect,
    owner_id: str,
    chronicum_id: str,
    query: ActaQuery,
    position: int,
    limit: int,
) -> Plan[tuple[list[Actum], int] | tuple[list[Actum], int, bool] | None]:
    rows = yield dialect.after_sql(owner_id, chronicum_id, query, position, limit)
    if not rows or rows[0][0] is None:
        return None
    acta = [actum(chronicum_id, row[2:11]) for row in rows if row[11] is not None]
    if query.max_bytes is not None and rows[0][12]:
        # Cut at the byte budget: the rest is read next, at once.
        return acta, int(rows[-1][11]), True
    if len(acta) >= limit:
        return acta, int(rows[-1][11])
    # Every actum up to the horizon was read, the filtered-out ones included.
    return acta, max(position, int(rows[0][1] or 0))
