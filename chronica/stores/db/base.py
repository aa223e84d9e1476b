"""The plain dialect: chronica's SQL for any database Django supports, and the base
of every vendor's dialect.

A dialect is to chronica's two tables what ``DatabaseOperations`` and
``DatabaseFeatures`` are to a Django backend: the statements, built once from named
templates, and each way a vendor differs as an attribute or a method that the
vendor's subclass overrides (``sqlite.py``, ``postgresql.py``). The store asks the
dialect; nothing asks ``connection.vendor`` but the choice of the dialect itself.

Also here, because every dialect and the asyncio path share them: ``Plan``, the
statements of one store call, and ``run_plan``, which runs one on a Django cursor.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Generator, Sequence
from typing import Any, NamedTuple, TypeVar

from django.db import IntegrityError, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from ... import models
from ...errors import ChronicumExists
from ...interfaces import Subscription
from ...values import FILTERS, ActaQuery, Actum, Chronicum

__all__ = [
    "BaseDialect",
    "Database",
    "Plan",
    "Statement",
    "Template",
    "Where",
    "filters",
    "run_plan",
]

_T = TypeVar("_T")

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


class Database(NamedTuple):
    """What a plan needs to know of the database it runs on: the alias, the database's
    name (together, the key of what is known about it), and whether its connections
    prepare statements (OPTIONS ``server_side_binding`` and ``prepare_threshold``)."""

    alias: str
    name: str
    prepares: bool = False


class Template:
    """A statement, or a piece of one, as a ``str.format`` text. Read on a dialect it is
    the text formatted for that dialect (once: the dialect keeps it).

    A field names, in this order: one of ``fields`` (texts formatted the same way),
    one of ``later`` (kept as a field, for the caller to fill in at each call), or an
    attribute of the dialect: a text, another template, or a method called with no
    argument. Any other name is a table alias: ``{a.columns}`` is
    ``dialect.columns("a.")``. The tables' names come from the models' ``_meta``.
    """

    def __init__(self, text: str, *, later: Sequence[str] = (), **fields: str) -> None:
        self.text = text
        self.later = tuple(later)
        self.fields = fields
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, dialect: object, owner: type | None = None) -> str:
        if dialect is None:
            return self.text
        text = self.render(dialect)
        dialect.__dict__[self.name] = text
        return text

    def render(self, dialect: object) -> str:
        fields = _Fields(dialect, {name: "{" + name + "}" for name in self.later})
        for name, text in self.fields.items():
            fields[name] = text.format_map(_Fields(dialect, {}))
        return self.text.format_map(fields)


class _Fields(dict[str, Any]):
    def __init__(self, dialect: object, given: dict[str, str]) -> None:
        super().__init__(given)
        self.dialect = dialect

    def __missing__(self, name: str) -> Any:
        if not hasattr(self.dialect, name):
            return _Alias(self.dialect, f"{name}.")
        value = getattr(self.dialect, name)
        return value() if callable(value) else value


class _Alias:
    def __init__(self, dialect: object, prefix: str) -> None:
        self.dialect, self.prefix = dialect, prefix

    def __getattr__(self, name: str) -> str:
        return getattr(self.dialect, name)(self.prefix)  # type: ignore[no-any-return]

    def __format__(self, spec: str) -> str:
        raise KeyError(f"{self.prefix[:-1]!r} is neither a field nor an attribute of the dialect")


@dataclasses.dataclass(frozen=True)
class Where:
    """Conditions of a statement, joined with AND, and their parameters in order."""

    sql: str
    params: list[Any]


def filters(query: ActaQuery) -> tuple[list[str], list[Any]]:
    """The conditions that ``query``'s filters put on the acta, and their parameters:
    the one place a window filter becomes SQL, for the window and for follow alike."""
    conditions: list[str] = []
    params: list[Any] = []
    for declared in FILTERS:
        values = getattr(query, declared.field)
        if values:
            column = declared.attribute
            conditions.append(f"{column} IN ({', '.join(['%s'] * len(values))})")
            params.extend(sorted(str(v) for v in values))
    return conditions, params


_LIST = (
    "SELECT id, owner_id, {chronicum_times} FROM {chronica} WHERE owner_id = %s{page}"
    " ORDER BY last_activity_at DESC, id LIMIT %s"
)
CREATE_ATTEMPTS = 6
"""How often a create on a database without ON CONFLICT tries again when the chronicum
that took its ID was deleted meanwhile."""


def _limit(last_n: int) -> int | None:
    # A limit beyond any BIGINT is no limit; the database would refuse it as out of range.
    return last_n if 0 < last_n < 2**63 else None


class BaseDialect:
    """Chronica's SQL in the plain dialect, and the features a vendor may change."""

    acta = models.Actum._meta.db_table
    chronica = models.Chronicum._meta.db_table

    # -- features ----------------------------------------------------------------
    has_on_conflict = False
    """``INSERT ... ON CONFLICT DO NOTHING`` (PostgreSQL; SQLite 3.24 and later)."""
    writes_in_one_statement = False
    """A write, a batch included, is one statement (``record_statement``), run as a
    plan, which the asyncio path runs too. Otherwise a write is a transaction that
    starts with a write (``plans.record_in_transaction``)."""

    def __init__(self) -> None:
        # Every template formatted now: a wrong field fails at import, not mid-call.
        for klass in type(self).__mro__:
            for name, value in vars(klass).items():
                if isinstance(value, Template):
                    getattr(self, name)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    # -- fragments ---------------------------------------------------------------

    def timestamp(self, column: str) -> str:
        """How a read selects a timestamp column (``plans.utc`` turns it back)."""
        return column

    def actum_time(self, column: str) -> str:
        """How a read of acta selects their time (``rows.acta_of`` turns it back)."""
        return self.timestamp(column)

    def octets(self, column: str) -> str:
        """The size of a text column in bytes of UTF-8."""
        return f"length(CAST({column} AS BLOB))"

    def columns(self, table: str = "") -> str:
        """What every read selects of an actum, in the order ``plans.actum`` takes it."""
        t = table
        return (
            f"{t}id, {t}kind, {t}actor_kind, {t}actor, {t}content, {self.actum_time(t + 'at')},"
            f" {t}call_id, {t}data, {t}recorded_by"
        )

    def data_octets(self, column: str) -> str:
        """The size of the JSON ``data`` column in bytes (0 for NULL)."""
        return f"COALESCE({self.octets(column)}, 0)"

    def size(self, table: str = "") -> str:
        """What an actum weighs against ``ActaQuery.max_bytes``."""
        return f"({self.octets(table + 'content')} + {self.data_octets(table + 'data')})"

    def within_bytes(self, sql: str, columns: str, table: str) -> str:
        """``sql`` (a window, newest first, selecting ``columns``) cut to the newest acta
        whose sizes add up to the byte budget (one more parameter), the newest always
        kept, then read whole (one more: the chronicum ID). The running sum is taken
        over sequence numbers and sizes only: the acta past the budget are never read
        into Python, nor their content and data held by the database for the sum."""
        sized = sql.replace(columns, f"{table}seq AS w_seq, {self.size(table)} AS w_size", 1)
        return (
            f"SELECT {self.columns('k.')} FROM {self.acta} k JOIN (SELECT c.w_seq FROM"
            " (SELECT b.w_seq, SUM(b.w_size) OVER (ORDER BY b.w_seq DESC ROWS UNBOUNDED"
            " PRECEDING) AS w_used, ROW_NUMBER() OVER (ORDER BY b.w_seq DESC) AS w_n"
            f" FROM ({sized}) b) c WHERE c.w_used <= %s OR c.w_n = 1) f"
            f" ON k.{self.chronicum_is} AND k.seq = f.w_seq ORDER BY k.seq DESC"
        )

    def estimate(self, table: str = "") -> str:
        """The database's estimate of an actum that was stored without a token count: the
        default counter's formula, ``4 + ceil(UTF-8 bytes of content / 3.5)``."""
        return f"(4 + (2 * {self.octets(table + 'content')} + 6) / 7)"

    def chronicum_times(self) -> str:
        return f"{self.timestamp('started_at')}, {self.timestamp('last_activity_at')}"

    insert_columns = (
        "id, chronicum_id, kind, actor_kind, actor, content, at, call_id, data, tokens,"
        " idempotency_key, recorded_by"
    )

    # -- statements --------------------------------------------------------------

    chronicum_is = "chronicum_id = %s"
    """How every statement that reads or writes acta names its chronicum: by equality
    on ``chronicum_id`` (parameter: the ID), so that a table partitioned or distributed
    by ``chronicum_id`` sends it to one partition or shard (docs/deploying-replicas.md).
    PostgreSQL's is ``= ANY(ARRAY[...])``: still an equality that prunes partitions, but
    one that leaves ``ORDER BY chronicum_id DESC, seq DESC`` an order only the
    (chronicum_id, seq) index serves; after a plain ``=`` the planner drops
    chronicum_id from the order, and may then walk the primary key backwards and
    filter, reading every newer actum of every other chronicum (BENCHMARKS.md, "Plans
    on the big sessions"), as the statistics decide."""

    create = Template(
        "INSERT INTO {chronica} (id, owner_id, started_at, last_activity_at)"
        " VALUES (%s, %s, %s, %s) ON CONFLICT (id) DO NOTHING"
    )
    get = Template("SELECT owner_id, started_at, last_activity_at FROM {chronica} WHERE id = %s")
    exists = Template("SELECT 1 FROM {chronica} WHERE id = %s")
    exists_owned = Template("SELECT 1 FROM {chronica} WHERE id = %s AND owner_id = %s")
    actum_exists = Template("SELECT 1 FROM {acta} WHERE chronicum_id = %s AND id = %s")
    owned = Template("({exists_owned})")
    owns = Template("EXISTS {owned}")
    # The batch a key recorded: the keyed actum and "<key>\n<position>" for the rest.
    by_key_where = Template(
        "SELECT {columns} FROM {acta} WHERE chronicum_id = %s"
        " AND (idempotency_key = %s OR substr(idempotency_key, 1, %s) = %s)"
    )
    by_key = Template("{by_key_where} ORDER BY seq")
    by_key_owned = Template("{by_key_where} AND {owns} ORDER BY seq")
    by_seq = Template("SELECT {columns} FROM {acta} WHERE {chronicum_is} AND seq = %s")
    touch = Template("UPDATE {chronica} SET last_activity_at = last_activity_at WHERE id = %s")
    touch_owned = Template("{touch} AND owner_id = %s")
    # A write first, so that SQLite takes its write lock before it reads.
    lock = Template("{touch_owned}")
    insert = Template(
        "INSERT INTO {acta} ({insert_columns})"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    )
    bump = Template("UPDATE {chronica} SET last_activity_at = %s WHERE id = %s")
    delete_acta = Template("DELETE FROM {acta} WHERE chronicum_id = %s")
    delete_chronicum = Template("DELETE FROM {chronica} WHERE id = %s")
    delete_actum = Template("DELETE FROM {acta} WHERE {chronicum_is} AND seq = %s")
    # The first condition lets the index seek to the page's start; the second settles ties.
    list_first = Template(_LIST, page="")
    list_after = Template(
        _LIST, page=" AND last_activity_at <= %s AND (last_activity_at < %s OR id > %s)"
    )
    newest_seq = Template(
        "SELECT seq FROM {acta} WHERE {chronicum_is} ORDER BY chronicum_id DESC, seq DESC LIMIT 1"
    )
    position_now = Template("SELECT {owned}, ({newest_seq})")
    before_actum = Template(
        "seq < (SELECT MIN(seq) FROM {acta} WHERE chronicum_id = %s AND id = %s)"
    )
    position_of = Template(
        "SELECT {owned}, (SELECT MAX(seq) FROM {acta} WHERE chronicum_id = %s AND id = %s)"
    )

    # chronica_purge: a chronicum's acta counted (up to a limit), the oldest deleted.
    count_acta = Template("SELECT COUNT(*) FROM {acta} WHERE {chronicum_is}")
    count_acta_up_to = Template(
        "SELECT COUNT(*) FROM (SELECT 1 FROM {acta} WHERE {chronicum_is} LIMIT %s) AS up_to"
    )
    delete_oldest = Template(
        "DELETE FROM {acta} WHERE {chronicum_is} AND seq IN (SELECT seq FROM {acta}"
        " WHERE {chronicum_is} ORDER BY chronicum_id, seq LIMIT %s)"
    )

    # -- the context window ------------------------------------------------------

    window = Template(
        "SELECT {columns} FROM {acta} WHERE {where} ORDER BY chronicum_id DESC, seq DESC{limit}",
        later=("where", "limit"),
    )
    # A budget: walk back from the newest actum one index probe at a time, keeping a
    # running sum, and stop at the first actum that does not fit (or at last_n). The
    # time grows with the window, not with the chronicum.
    budget_window = Template(
        """
WITH RECURSIVE w(seq, running, n) AS (
    SELECT a.seq, {count}, 1 FROM {acta} a WHERE a.{chronicum_is} AND a.seq = (
        SELECT seq FROM {acta} WHERE {where}
        ORDER BY chronicum_id DESC, seq DESC LIMIT 1)
    UNION ALL
    SELECT a.seq, w.running + {count}, w.n + 1
    FROM w JOIN {acta} a ON a.{chronicum_is} AND a.seq = (
        SELECT seq FROM {acta} WHERE {step} AND seq < w.seq
        ORDER BY chronicum_id DESC, seq DESC LIMIT 1)
    WHERE w.running <= %s{limit}
)
SELECT {a.columns}
FROM w JOIN {acta} a ON a.{chronicum_is} AND a.seq = w.seq
WHERE w.running <= %s ORDER BY w.seq DESC
""",
        later=("where", "step", "limit"),
        count="COALESCE(a.tokens, {a.estimate})",
    )

    def owner_check(self, functions: bool) -> str:
        """The condition that the chronicum (parameters: its ID, the owner) is the owner's."""
        return self.owns

    def window_conditions(
        self,
        chronicum_id: str,
        query: ActaQuery,
        owner_id: str | None,
        *,
        with_owner: bool = True,
        functions: bool = False,
    ) -> Where:
        """What every window statement asks of an actum: this chronicum, the filters,
        ``before``, and (given ``owner_id`` and ``with_owner``) the owner's check."""
        # chronicum_is and a two-column ORDER BY (see chronicum_is): only the
        # (chronicum_id, seq) index can serve this order; a test EXPLAINs it.
        conditions, params = filters(query)
        where = [self.chronicum_is, *conditions]
        params = [chronicum_id, *params]
        if query.before is not None:
            where.append(self.before_actum)
            params += [chronicum_id, query.before]
        if owner_id is not None and with_owner:
            where.append(self.owner_check(functions))
            params += [chronicum_id, owner_id]
        return Where(" AND ".join(where), params)

    def window_sql(
        self,
        chronicum_id: str,
        query: ActaQuery,
        owner_id: str | None = None,
        *,
        functions: bool = False,
    ) -> Statement:
        """The context window in one statement: the newest acta that pass the filters, up
        to the limit and the token budget, newest first (the caller turns them back).
        Given ``owner_id``, no actum is read unless the chronicum is that owner's (checked
        by ``chronica_owns`` when ``functions``: PostgreSQL with migration 0004's functions)."""
        where = self.window_conditions(chronicum_id, query, owner_id, functions=functions)
        limit = _limit(query.last_n)
        if query.max_tokens is None:
            # Simpler than a join with the chronicum (which would tell a missing chronicum
            # from an empty window in the same statement), so cheaper to plan: only an
            # empty window pays a second, tiny query.
            sql = self.window.format(where=where.sql, limit=" LIMIT %s" if limit else "")
            params = where.params + ([limit] if limit else [])
            if query.max_bytes is not None:
                cut = self.within_bytes(sql, self.columns(), "")
                return cut, [*params, query.max_bytes, chronicum_id]
            return sql, params
        step = self.window_conditions(chronicum_id, query, owner_id, with_owner=False)
        sql = self.budget_window.format(
            where=where.sql, step=step.sql, limit=" AND w.n < %s" if limit else ""
        )
        params = [chronicum_id, *where.params, chronicum_id, *step.params, query.max_tokens]
        if limit:
            params.append(limit)
        params += [chronicum_id, query.max_tokens]
        if query.max_bytes is not None:
            cut = self.within_bytes(sql, self.columns("a."), "a.")
            return cut, [*params, query.max_bytes, chronicum_id]
        return sql, params

    # -- following ---------------------------------------------------------------

    # The chronicum and "seq > position" are where the (chronicum_id, seq) index scan
    # starts, however long the chronicum; the horizon (the newest seq) is read in the
    # same statement, so with the same snapshot as the page.
    after = Template(
        """
SELECT o.owned, o.top, {p.columns}, p.seq
FROM (SELECT {owned} AS owned, ({newest_seq}) AS top) o
LEFT JOIN (
    SELECT seq, id, kind, actor_kind, actor, content, at, call_id, data, recorded_by FROM {acta}
    WHERE {chronicum_is} AND seq > %s{filters}
      AND EXISTS {owned}
    ORDER BY chronicum_id, seq LIMIT %s
) p ON 1 = 1
ORDER BY p.seq
""",
        later=("filters",),
    )

    # With a byte budget: the sizes of the next acta first (no content or data read),
    # then only those that fit, the first always; "cut" tells that some did not.
    after_within = Template(
        """
WITH sized AS (
    SELECT seq, {size} AS w_size FROM {acta}
    WHERE {chronicum_is} AND seq > %s{filters}
      AND EXISTS {owned}
    ORDER BY chronicum_id, seq LIMIT %s
), fit AS (
    SELECT s.seq FROM (
        SELECT seq, SUM(w_size) OVER (ORDER BY seq ROWS UNBOUNDED PRECEDING) AS w_used,
               ROW_NUMBER() OVER (ORDER BY seq) AS w_n
        FROM sized
    ) s WHERE s.w_used <= %s OR s.w_n = 1
)
SELECT o.owned, o.top, {p.columns}, p.seq, o.cut
FROM (SELECT {owned} AS owned, ({newest_seq}) AS top,
             (SELECT COUNT(*) FROM sized) > (SELECT COUNT(*) FROM fit) AS cut) o
LEFT JOIN (
    SELECT seq, id, kind, actor_kind, actor, content, at, call_id, data, recorded_by FROM {acta}
    WHERE {chronicum_is} AND seq IN (SELECT seq FROM fit)
) p ON 1 = 1
ORDER BY p.seq
""",
        later=("filters",),
    )

    def after_sql(
        self, owner_id: str, chronicum_id: str, query: ActaQuery, position: int, limit: int
    ) -> Statement:
        """The acta after seq ``position`` that pass the filters, at most ``limit``, with
        the owner's check and the newest seq, in one statement (``plans.after_plan``).
        With ``query.max_bytes``, only as many as fit it, and whether some did not."""
        conditions, filter_params = filters(query)
        where = "".join(f" AND {c}" for c in conditions)
        if query.max_bytes is not None:
            params: list[Any] = [chronicum_id, position, *filter_params, chronicum_id, owner_id]
            params += [limit, query.max_bytes, chronicum_id, owner_id, chronicum_id]
            params.append(chronicum_id)
            return self.after_within.format(filters=where), params
        params = [chronicum_id, owner_id, chronicum_id]
        params += [chronicum_id, position, *filter_params]
        params += [chronicum_id, owner_id, limit]
        return self.after.format(filters=where), params

    # -- writing -----------------------------------------------------------------

    def use_functions(
        self, database: Database, *, writing: bool, attested: bool = False
    ) -> Plan[bool]:
        """Whether a write (``writing``) or a window calls migration 0004's functions:
        a plan, since it may have to look them up."""
        yield from ()
        return False

    read_state_call = ""
    """Where ``use_read_state``: the call of migration 0007's function (parameters: the
    namespace, the owner, the chronicum, the limit or NULL)."""

    def use_read_state(self, database: Database) -> Plan[bool]:
        """Whether a session read (state and newest acta) calls migration 0007's function."""
        yield from ()
        return False

    def use_window_function(self, database: Database) -> Plan[bool]:
        """Whether a plain window (no budget, no ``before``, no byte budget) calls
        migration 0008's function instead of ``window_sql``."""
        yield from ()
        return False

    def window_call_statement(
        self, chronicum_id: str, query: ActaQuery, owner_id: str
    ) -> Statement:
        """Where ``use_window_function``: the call that reads ``window_sql``'s rows."""
        raise NotImplementedError(f"{type(self).__name__} has no window function")

    def record_statement(
        self,
        acta: Sequence[Actum],
        key: str | None,
        tokens: Sequence[int | None],
        owner_id: str | None,
        *,
        functions: bool,
    ) -> Statement:
        """Where ``writes_in_one_statement``: the write of ``acta`` as one statement. It
        answers one row: without a key, the write's epoch microseconds (no row, or
        NULL, when the chronicum is not found); with one, (the microseconds or NULL if
        the key was used, whether the chronicum was found)."""
        raise NotImplementedError(f"{self!r} writes in a transaction, not in one statement")

    # -- behaviour ---------------------------------------------------------------

    def create_chronicum(self, connection: BaseDatabaseWrapper, chronicum: Chronicum) -> None:
        """Store ``chronicum``; ``ChronicumExists`` if its ID is taken."""
        if self.has_on_conflict:
            # One statement that creates or finds the ID taken: no IntegrityError, which a
            # delete of the taking chronicum right after it would leave unexplained.
            params = [
                chronicum.id,
                chronicum.owner_id,
                connection.ops.adapt_datetimefield_value(chronicum.started_at),
                connection.ops.adapt_datetimefield_value(chronicum.last_activity_at),
            ]

            def insert() -> int:
                with connection.cursor() as cursor:
                    cursor.execute(self.create, params)
                    return int(cursor.rowcount)

            if self.retry_when_locked(connection, insert) == 0:
                raise ChronicumExists(chronicum.id)
            return
        self._create_with_the_orm(connection, chronicum)

    def _create_with_the_orm(self, connection: BaseDatabaseWrapper, chronicum: Chronicum) -> None:
        """``create_chronicum`` on a database with no ``ON CONFLICT``."""
        rows = models.Chronicum.objects.using(connection.alias)

        def insert() -> None:
            with transaction.atomic(using=connection.alias):
                rows.create(
                    id=chronicum.id,
                    owner_id=chronicum.owner_id,
                    started_at=chronicum.started_at,
                    last_activity_at=chronicum.last_activity_at,
                )

        for _attempt in range(CREATE_ATTEMPTS):
            try:
                self.retry_when_locked(connection, insert)
                return
            except IntegrityError:
                if rows.filter(pk=chronicum.id).exists():
                    raise ChronicumExists(chronicum.id) from None
                # The chronicum that took the ID was deleted since: try again.
        raise ChronicumExists(chronicum.id)

    def lock_chronicum(self, cursor: Any, chronicum_id: str, owner_id: str) -> bool:
        """Take the chronicum's row lock (SQLite: the database's write lock); whether it
        is there and ``owner_id``'s."""
        cursor.execute(self.lock, [chronicum_id, owner_id])
        return bool(cursor.rowcount)

    def deleted(self, cursor: Any, chronicum_id: str) -> None:
        """Tell followers, in the deleting transaction, that the chronicum is gone."""

    def subscribe(self, alias: str, chronicum_id: str) -> Subscription | None:
        """Wake-ups for a follower of ``chronicum_id``; ``None``: followers poll."""
        return None

    def supports_async(self) -> bool:
        """Whether the store's ``a*`` methods run plans on this database without a thread."""
        return False

    def retry_when_locked(self, connection: BaseDatabaseWrapper, write: Callable[[], _T]) -> _T:
        """Run ``write``, a whole transaction of ours (only SQLite runs it again)."""
        return write()
