"""PostgreSQL's dialect: a write, a batch included, is one statement; reads hand times
over as integers; followers are woken by NOTIFY (``chronica.stores.listener``).

The chronicum row is locked first (UPDATE or FOR UPDATE); the acta are inserted after
it, so their seq is drawn only once the lock is held. A batch travels as one JSON
array, one parameter for any batch size (one statement text); WITH ORDINALITY and
ORDER BY n number the batch in its given order. One JSON string, not an array per
column: with Django's client-side binding psycopg quotes a string in C but builds an
array literal in Python, element by element (BENCHMARKS.md, case batch).

Writes without a key call the PL/pgSQL functions of migration 0004 (the same steps:
lock and bump, insert, NOTIFY when followed): PostgreSQL keeps their plans for the
session, where a statement sent with Django's client-side binding is planned anew
each time (BENCHMARKS.md, "Where the write and the window stand"). The owner, NULL
when the write is not owner-scoped, is checked in the same UPDATE. Each answers one
scalar (the write's epoch microseconds, NULL when the chronicum is not found), so the
call is "SELECT f(...)", cheaper to plan than "SELECT ... FROM f(...)". Where the
functions are missing (tables made without migrations, pytest-django's
--no-migrations), the same write is one statement, with the same parameters and
answer (no row when the chronicum is not found): slower to plan, not different.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ...interfaces import Subscription
from ...values import FILTERS, ActaQuery, Actum
from ..listener import NOTIFY_CHANNEL, PG_NOTIFY, notify_if_followed
from .base import BaseDialect, Database, Plan, Statement, Template, _limit
from .rows import actum_params, batch_json, member_keys

__all__ = ["PostgreSQLDialect", "forget_functions"]

ISO_AT = "to_char({} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"+00:00\"')"
"""An actum's time as ISO 8601 text in UTC, whatever the session's TimeZone and
DateStyle: ``datetime.fromisoformat`` (C) makes it a datetime in a quarter of the
instructions of epoch microseconds plus a timedelta, on a window's 20 to 100 rows
(BENCHMARKS.md, issue 23); PostgreSQL formats it in about 0.5 µs more a row."""
MICROS = "(EXTRACT(EPOCH FROM {}) * 1000000)::bigint"
"""A timestamp read as microseconds since the epoch, exact (EXTRACT gives a numeric
since PostgreSQL 14): an int becomes a datetime much faster than Django's timestamptz
loader, written in Python, parses one (BENCHMARKS.md, case window)."""

_RECORD = """
WITH c AS (
    UPDATE {chronica} SET last_activity_at = clock_timestamp()
    WHERE id = %s AND owner_id = COALESCE(%s::varchar, owner_id)
    RETURNING id, last_activity_at
), ins AS (
    INSERT INTO {acta} ({insert_columns})
    SELECT v.id, c.id, v.kind, v.actor_kind, v.actor, v.content, c.last_activity_at,
           v.call_id, v.data::jsonb, v.tokens, NULL, v.recorded_by
    FROM c, {source}
    ORDER BY v.n
)
SELECT {written}, {notify} FROM c
"""

# With a key: the first actum carries it, and the rest are inserted only from the
# first's result, so a key already used (ON CONFLICT) writes nothing at all.
_RECORD_KEYED = """
WITH c AS (
    SELECT id FROM {chronica} WHERE id = %s{owner} FOR UPDATE
), first AS (
    INSERT INTO {acta} ({insert_columns})
    SELECT %s, c.id, %s, %s, %s, %s, clock_timestamp(), %s, %s::jsonb, %s, %s, %s FROM c
    ON CONFLICT (chronicum_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING chronicum_id, at
), rest AS (
    INSERT INTO {acta} ({insert_columns})
    SELECT v.id, first.chronicum_id, v.kind, v.actor_kind, v.actor, v.content, first.at,
           v.call_id, v.data::jsonb, v.tokens, v.key, v.recorded_by
    FROM first, {batch}
    ORDER BY v.n
), upd AS (
    UPDATE {chronica} SET last_activity_at = first.at FROM first
    WHERE {chronica}.id = %s AND {chronica}.id = first.chronicum_id
)
SELECT (SELECT {written} FROM first), EXISTS (SELECT 1 FROM c),
       (SELECT {notify} FROM first)
"""
# What the writes answer: the write's time, and the NOTIFY when followed.
_WRITTEN = {"written": MICROS.format("last_activity_at"), "notify": notify_if_followed("c.id")}
_WRITTEN_KEYED = {
    "written": MICROS.format("at"),
    "notify": notify_if_followed("first.chronicum_id"),
}


_FUNCTIONS: dict[tuple[str, ...], bool] = {}
"""Whether migration 0004's functions exist, by (alias, database name), and 0006's and
0007's (the same key and "recorded_by" or "read_state"): looked up on
the first write or window of a process, since the tables cannot lose them without a
migration."""


def forget_functions() -> None:
    """Look the functions up again at the next write or window (after a migration that
    added or dropped them in this process)."""
    _FUNCTIONS.clear()


_WINDOW_CALLS: dict[ActaQuery, tuple[str, list[Any]]] = {}
"""By query (immutable): its call of chronica_window and the parameters after the owner
and the chronicum (a window's queries are few: ``validation.build_query`` keeps them)."""


def array_literal(values: Iterable[object]) -> str:
    """A PostgreSQL array's text (``'{"a","b"}'``) of strings, sorted: each element
    double-quoted, its backslashes and double quotes escaped (no NUL reaches here: no
    store can hold one, ``validation.storable``)."""
    quoted = ('"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values)
    return "{" + ",".join(sorted(quoted)) + "}"


class PostgreSQLDialect(BaseDialect):
    has_on_conflict = True
    writes_in_one_statement = True

    def timestamp(self, column: str) -> str:
        return MICROS.format(column)

    def actum_time(self, column: str) -> str:
        return ISO_AT.format(column)

    def octets(self, column: str) -> str:
        return f"octet_length({column})"

    def data_octets(self, column: str) -> str:
        # jsonb prints ", " and ": " between tokens; the compact text (dumps_data's, the
        # API's) has none. Those in strings go too: at worst an undercount, which the
        # API makes good by counting what it sends.
        text = f"{column}::text"
        return f"COALESCE(octet_length(replace(replace({text}, ', ', ','), ': ', ':')), 0)"

    lock = Template("{exists_owned} FOR UPDATE")
    chronicum_is = "chronicum_id = ANY(ARRAY[%s])"

    # -- migration 0004's functions (chronica.stores.db.functions_0004) ----------

    # Migration 0004's functions, and 0006's (the attested writes), in one lookup.
    find_functions = (
        "SELECT to_regproc('chronica_record_actum') IS NOT NULL"
        " AND to_regproc('chronica_record_acta') IS NOT NULL"
        " AND to_regproc('chronica_owns') IS NOT NULL,"
        " to_regproc('chronica_record_actum_by') IS NOT NULL"
        " AND to_regproc('chronica_record_acta_by') IS NOT NULL,"
        " to_regproc('chronica_read_state') IS NOT NULL,"
        " to_regproc('chronica_window') IS NOT NULL"
    )
    # Migration 0007's: the state and the newest acta in one call.
    read_state_call = "SELECT * FROM chronica_read_state(%s, %s, %s, %s)"
    # Migration 0008's: the plain window, on plans kept for the session.
    window_call = "SELECT * FROM chronica_window(%s, %s, {}, {}, {}, {})"
    record_actum_call = "SELECT chronica_record_actum(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    record_acta_call = "SELECT chronica_record_acta(%s, %s, %s::json)"
    # Migration 0006's, for attested writes (with recorded_by).
    record_actum_by_call = (
        "SELECT chronica_record_actum_by(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    )
    record_acta_by_call = "SELECT chronica_record_acta_by(%s, %s, %s::json)"

    def owner_check(self, functions: bool) -> str:
        # chronica_owns runs once, in front of the scan, on the plan it keeps for the
        # session: the subquery was half of the window's planning.
        return "chronica_owns(%s, %s)" if functions else self.owns

    # -- the writes as statements ------------------------------------------------

    one_actum = Template(
        "(VALUES (%s::varchar, %s::varchar, %s::varchar, %s::varchar, %s::text, %s::varchar,"
        " %s::text, %s::bigint, %s::varchar, 1::bigint)) AS v(id, kind, actor_kind, actor,"
        " content, call_id, data, tokens, recorded_by, n)"
    )
    batch = Template(
        "ROWS FROM (json_to_recordset(%s::json) AS (id varchar, kind varchar,"
        " actor_kind varchar, actor varchar, content text, call_id varchar, data text,"
        " tokens bigint, recorded_by varchar, key varchar)) WITH ORDINALITY AS"
        " v(id, kind, actor_kind, actor, content, call_id, data, tokens, recorded_by, key, n)"
    )
    record_one = Template(_RECORD, source="{one_actum}", **_WRITTEN)
    record_batch = Template(_RECORD, source="{batch}", **_WRITTEN)
    record_keyed = Template(_RECORD_KEYED, owner="", **_WRITTEN_KEYED)
    record_keyed_owned = Template(_RECORD_KEYED, owner=" AND owner_id = %s", **_WRITTEN_KEYED)

    def use_functions(
        self, database: Database, *, writing: bool, attested: bool = False
    ) -> Plan[bool]:
        """Where the database has them (looked up once a process), except for a write
        where the connections prepare statements: a prepared write is planned once a
        connection, and then runs faster than the function (a window's owner check is
        faster with the function either way; BENCHMARKS.md)."""
        if writing and database.prepares:
            return False
        key = (database.alias, database.name)
        by = (database.alias, database.name, "recorded_by")
        functions = _FUNCTIONS.get(key)
        if functions is None:
            found = yield self.find_functions, []
            functions = _FUNCTIONS[key] = bool(found[0][0])
            _FUNCTIONS[by] = functions and bool(found[0][1])
            _FUNCTIONS[(*key, "read_state")] = bool(found[0][2])
            _FUNCTIONS[(*key, "window")] = bool(found[0][3])
        return _FUNCTIONS.get(by, False) if attested else functions

    def use_read_state(self, database: Database) -> Plan[bool]:
        """Whether migration 0007's ``chronica_read_state`` exists (looked up with the
        others, once a process)."""
        yield from self.use_functions(database, writing=False)
        return _FUNCTIONS.get((database.alias, database.name, "read_state"), False)

    def use_window_function(self, database: Database) -> Plan[bool]:
        """Whether a plain window calls migration 0008's ``chronica_window``: where it
        exists (looked up with the others, once a process). Also where the connections
        prepare statements: the prepared call ran faster than the prepared statement
        (BENCHMARKS.md, issue 23)."""
        yield from self.use_functions(database, writing=False)
        return _FUNCTIONS.get((database.alias, database.name, "window"), False)

    def window_call_statement(
        self, chronicum_id: str, query: ActaQuery, owner_id: str
    ) -> Statement:
        """The call of ``chronica_window`` for a window with no budget and no ``before``:
        each filter an array of its values, or NULL for none. The arrays travel as their
        text (psycopg quotes a string in C, but builds an array literal in Python)."""
        known = _WINDOW_CALLS.get(query)
        if known is None:
            arrays = [array_literal(v) for f in FILTERS if (v := getattr(query, f.field))]
            limit = _limit(query.last_n)
            # A NULL is written into the text: a parameter less for psycopg to quote.
            nulls = ["%s::text[]" if getattr(query, f.field) else "NULL" for f in FILTERS]
            sql = self.window_call.format(*nulls, "%s::bigint" if limit else "NULL")
            known = sql, [*arrays, *([limit] if limit else [])]
            if len(_WINDOW_CALLS) >= 512:
                _WINDOW_CALLS.clear()
            _WINDOW_CALLS[query] = known
        sql, params = known
        return sql, [owner_id, chronicum_id, *params]

    def record_statement(
        self,
        acta: Sequence[Actum],
        key: str | None,
        tokens: Sequence[int | None],
        owner_id: str | None,
        *,
        functions: bool,
    ) -> Statement:
        chronicum_id = acta[0].chronicum_id
        attested = any(a.recorded_by is not None for a in acta)
        if key is None and len(acta) == 1:
            params = actum_params(acta[0], tokens[0])
            if functions and attested:
                return self.record_actum_by_call, [chronicum_id, owner_id, *params]
            if functions:
                # The function takes every column but recorded_by (always NULL here).
                return self.record_actum_call, [chronicum_id, owner_id, *params[:-1]]
            return self.record_one, [chronicum_id, owner_id, *params]
        if key is None:
            if functions and attested:
                return self.record_acta_by_call, [
                    chronicum_id,
                    owner_id,
                    batch_json(acta, None, tokens),
                ]
            sql = self.record_acta_call if functions else self.record_batch
            return sql, [chronicum_id, owner_id, batch_json(acta, None, tokens)]
        sql = self.record_keyed if owner_id is None else self.record_keyed_owned
        return sql, [
            chronicum_id,
            *([] if owner_id is None else [owner_id]),
            *actum_params(acta[0], tokens[0])[:-1],
            key,
            acta[0].recorded_by,
            batch_json(acta[1:], member_keys(key, len(acta))[1:], tokens[1:]),
            chronicum_id,  # the UPDATE names it too: a partition, not a join, finds it
        ]

    # -- behaviour ---------------------------------------------------------------

    def lock_chronicum(self, cursor: Any, chronicum_id: str, owner_id: str) -> bool:
        cursor.execute(self.lock, [chronicum_id, owner_id])
        return bool(cursor.fetchall())

    def deleted(self, cursor: Any, chronicum_id: str) -> None:
        cursor.execute(PG_NOTIFY, [NOTIFY_CHANNEL, chronicum_id])

    def subscribe(self, alias: str, chronicum_id: str) -> Subscription | None:
        from ..listener import listen

        return listen(alias, chronicum_id)

    def supports_async(self) -> bool:
        from .. import pg_async

        return pg_async.available()
