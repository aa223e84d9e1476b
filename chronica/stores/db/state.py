"""``StateStore`` on a Django database: a chronicum's state in its own row (columns
``namespace`` and ``state`` of ``chronica``), owner and namespace state in
``chronica_states``, written in the transaction that appends the acta.

Lock order, the same for every writer so that none waits for another in a circle: the
chronicum's row first (an UPDATE, which on SQLite also takes the database's write
lock before anything is read), then the shared documents in key order.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from django.db import IntegrityError, connections, transaction

from ... import models
from ...errors import ChronicumExists, StateConflict
from ...states import Document, DocumentKey, apply_all, document_key
from ...validation import uncollected
from ...values import (
    ActaQuery,
    Actum,
    Chronicum,
    NamespaceListing,
    Recorded,
    StateChange,
    StateScope,
    StateView,
)
from . import plans
from .base import BaseDialect, Database, Plan, _limit, filters, run_plan
from .dialects import dialect_of, retry_when_locked
from .rows import actum, utc

if TYPE_CHECKING:
    from django.db.backends.base.base import BaseDatabaseWrapper

__all__ = ["DjangoStateStore"]

_T = TypeVar("_T")


class DjangoStateStore:
    """The ``StateStore`` capability of ``DjangoStore`` (mixed into it)."""

    if TYPE_CHECKING:  # DjangoStore's own, which this mixes into

        @property
        def alias(self) -> str: ...

        def _connection(self) -> BaseDatabaseWrapper: ...

        def record_batch_if_owner(
            self,
            owner_id: str,
            acta: Sequence[Actum],
            key: str | None,
            tokens: Sequence[int | None],
        ) -> Recorded | None: ...

        def _database(self, connection: BaseDatabaseWrapper | None = None) -> Database: ...

        async def _arun(self, plan: Plan[_T]) -> _T: ...

    def write_state(
        self,
        owner_id: str,
        chronicum_id: str,
        acta: Sequence[Actum],
        key: str | None,
        tokens: Sequence[int | None],
        changes: Sequence[StateChange],
        create: Chronicum | None,
    ) -> Recorded | None:
        connection = self._connection()
        alias = connection.alias

        def write() -> Recorded | None:
            with transaction.atomic(using=alias):
                return self._write_state(
                    alias, owner_id, chronicum_id, acta, key, tokens, changes, create
                )

        return retry_when_locked(connection, write)

    def _write_state(
        self,
        alias: str,
        owner_id: str,
        chronicum_id: str,
        acta: Sequence[Actum],
        key: str | None,
        tokens: Sequence[int | None],
        changes: Sequence[StateChange],
        create: Chronicum | None,
    ) -> Recorded | None:
        chronica = models.Chronicum.objects.using(alias)
        if create is not None:
            try:
                with transaction.atomic(using=alias):
                    chronica.create(
                        id=create.id,
                        owner_id=create.owner_id,
                        started_at=create.started_at,
                        last_activity_at=create.last_activity_at,
                    )
            except IntegrityError:
                raise ChronicumExists(create.id) from None
        mine = chronica.filter(id=chronicum_id, owner_id=owner_id)
        locked = _lock(alias, chronicum_id, owner_id)
        if locked is None:
            return None
        namespace, state = locked
        recorded = self.record_batch_if_owner(owner_id, acta, key, tokens) if acta else None
        if recorded is not None and recorded.replayed:
            return recorded
        for change in changes:
            if change.scope is StateScope.CHRONICUM and namespace not in (None, change.namespace):
                raise StateConflict(
                    f"chronicum {chronicum_id!r} keeps its state in {namespace!r},"
                    f" not {change.namespace!r}"
                )
        shared = sorted(
            {
                document_key(change, owner_id, chronicum_id)
                for change in changes
                if change.scope is not StateScope.CHRONICUM
            }
        )
        before: dict[DocumentKey, Document | None] = {k: _locked(alias, k) for k in shared}
        if namespace is not None:
            before[(StateScope.CHRONICUM, namespace, chronicum_id)] = state
        after = apply_all(before, changes, owner_id, chronicum_id)
        now = dt.datetime.now(dt.UTC)
        for (scope, ns, subject), document in after.items():
            if scope is StateScope.CHRONICUM:
                mine.update(namespace=ns, state=document)
            else:
                models.SharedState.objects.using(alias).filter(
                    namespace=ns, owner_id=subject
                ).update(value=document, updated_at=now)
        return Recorded([]) if recorded is None else recorded

    def read_state(
        self,
        owner_id: str,
        namespace: str,
        chronicum_id: str | None,
        query: ActaQuery | None,
    ) -> StateView:
        connection = self._connection()
        with connection.cursor() as cursor:
            return run_plan(
                cursor,
                _read_plan(
                    connection,
                    owner_id,
                    namespace,
                    chronicum_id,
                    query,
                    self._database(connection),
                ),
            )

    def list_namespace(self, namespace: str, owner_id: str | None) -> NamespaceListing:
        connection = self._connection()
        with connection.cursor() as cursor:
            return run_plan(cursor, _listing_plan(connection, namespace, owner_id))

    # -- the asyncio path (PostgreSQL: AsyncStateStore) ---------------------------

    async def aread_state(
        self,
        owner_id: str,
        namespace: str,
        chronicum_id: str | None,
        query: ActaQuery | None,
    ) -> StateView:
        """``read_state`` on psycopg's async connections: the same statements, on the
        primary, one connection of the pool for the state and the window."""
        connection = connections[self.alias]
        return await self._arun(
            _read_plan(
                connection,
                owner_id,
                namespace,
                chronicum_id,
                query,
                self._database(connection),
            )
        )

    async def alist_namespace(self, namespace: str, owner_id: str | None) -> NamespaceListing:
        """``list_namespace`` on psycopg's async connections (the same statements)."""
        return await self._arun(_listing_plan(connections[self.alias], namespace, owner_id))


def _locked(alias: str, key: DocumentKey) -> Document | None:
    """The shared document ``key`` under this transaction's lock, created empty if it
    is not there yet (so that two first writers of it queue on its row too)."""
    _scope, namespace, subject = key
    rows = models.SharedState.objects.using(alias).filter(namespace=namespace, owner_id=subject)
    for _attempt in range(3):
        found = rows.select_for_update().values_list("value", flat=True).first()
        if found is not None:
            return dict(found)
        try:
            with transaction.atomic(using=alias):
                models.SharedState.objects.using(alias).create(
                    namespace=namespace,
                    owner_id=subject,
                    value={},
                    updated_at=dt.datetime.now(dt.UTC),
                )
        except IntegrityError:
            continue  # another writer created it first: lock theirs
    raise AssertionError(f"the shared state {key} could not be locked")


def _sql(template: str, alias: str, **more: str) -> str:
    """``template`` with the tables of chronica's models, quoted, and ``more``."""
    quote = connections[alias].ops.quote_name
    return template.format(
        chronica=quote(models.Chronicum._meta.db_table),
        states=quote(models.SharedState._meta.db_table),
        **more,
    )


# The chronicum's lock (a write: on SQLite it takes the database's write lock) and its
# state, in one statement where the database can return rows from an UPDATE.
_LOCK_RETURNING = (
    "UPDATE {chronica} SET owner_id = owner_id WHERE id = %s AND owner_id = %s"
    " RETURNING namespace, state"
)
_LOCK = "UPDATE {chronica} SET owner_id = owner_id WHERE id = %s AND owner_id = %s"
_STATE_OF = "SELECT namespace, state FROM {chronica} WHERE id = %s"

# A namespace's chronica with their state, oldest activity first (the timestamps as the
# dialect reads them fastest: epoch microseconds on PostgreSQL), then its shared documents.
_LISTING = """
SELECT id, owner_id, {started_at}, {last_activity_at}, state FROM {chronica}
WHERE namespace = %s{owner} ORDER BY last_activity_at, owner_id, id
"""
_SHARED = "SELECT owner_id, value FROM {states} WHERE namespace = %s{owner}"


def _listing_plan(
    connection: BaseDatabaseWrapper, namespace: str, owner_id: str | None
) -> Plan[NamespaceListing]:
    """``list_namespace`` as a plan: the same statements on a Django cursor and on
    psycopg's async one. No ORM: a listing is thousands of rows, and Django's JSON
    field and timestamp loader, row by row, were most of its time (BENCHMARKS.md,
    issue 24)."""
    dialect = dialect_of(connection)
    mine = owner_id is not None
    rows = yield (
        _sql(
            _LISTING,
            connection.alias,
            started_at=dialect.timestamp("started_at"),
            last_activity_at=dialect.timestamp("last_activity_at"),
            owner=" AND owner_id = %s" if mine else "",
        ),
        [namespace, owner_id] if mine else [namespace],
    )
    with uncollected():
        listed = [
            (Chronicum(cid, owner, utc(started_at), utc(last_activity_at)), _json(state) or {})
            for cid, owner, started_at, last_activity_at, state in rows
        ]
    documents = yield (
        _sql(_SHARED, connection.alias, owner=" AND owner_id IN (%s, '')" if mine else ""),
        [namespace, owner_id] if mine else [namespace],
    )
    shared: dict[str, Any] = {subject: _json(value) for subject, value in documents}
    namespace_state = shared.pop("", {})
    return NamespaceListing(listed, shared, namespace_state)


def _read_plan(
    connection: BaseDatabaseWrapper,
    owner_id: str,
    namespace: str,
    chronicum_id: str | None,
    query: ActaQuery | None,
    database: Database,
) -> Plan[StateView]:
    """``read_state`` as a plan, on a Django cursor and on the asyncio path. A window of
    the newest acta (a limit and filters, no budget, no ``before``: an agent framework's
    session read) comes in the same statement as the state: one round trip, one snapshot. Any other
    window is the window's own statement after the state's."""
    dialect: BaseDialect = dialect_of(connection)
    newest = (
        chronicum_id is not None
        and query is not None
        and query.max_tokens is None
        and query.max_bytes is None
        and query.before is None
    )
    if (
        newest
        and chronicum_id is not None
        and query is not None
        and not filters(query)[0]
        and (yield from dialect.use_read_state(database))
    ):
        # Migration 0007's function: the same read, on plans kept for the session
        # (and no statement of the state's to make here).
        rows = yield (
            dialect.read_state_call,
            [namespace, owner_id, chronicum_id, _limit(query.last_n)],
        )
        return _view(rows[0], rows[1:], chronicum_id, owner_id, namespace)
    read_params = [namespace, owner_id, namespace, chronicum_id or "", owner_id]
    read = _sql(
        _READ_AS,
        connection.alias,
        started_at=dialect.timestamp("c.started_at"),
        last_activity_at=dialect.timestamp("c.last_activity_at"),
    )
    statement: tuple[str, list[Any]] = (read, read_params)
    together = False
    if newest and chronicum_id is not None and query is not None:
        functions = yield from dialect.use_functions(database, writing=False)
        window, window_params = dialect.window_sql(
            chronicum_id, query, owner_id, functions=functions
        )
        columns = dialect.columns()
        together = columns in window
        if together:
            window = window.replace(columns, f"{columns}, seq AS w_seq", 1)
            statement = (
                f"SELECT s.*, w.* FROM ({read}) s LEFT JOIN ({window}) w ON 1 = 1"
                " ORDER BY w.w_seq DESC",
                [*read_params, *window_params],
            )
    rows = yield statement
    if together:
        return _view(
            rows[0], [row for row in rows if row[6] is not None], chronicum_id, owner_id, namespace
        )
    view = _view(rows[0], None, chronicum_id, owner_id, namespace)
    if view.chronicum is not None and chronicum_id is not None and query is not None:
        acta = yield from plans.acta_plan(dialect, chronicum_id, query, owner_id, database)
        view = dataclasses.replace(view, acta=acta)
    return view


def _view(
    first: Sequence[Any],
    window: Sequence[Sequence[Any]] | None,
    chronicum_id: str | None,
    owner_id: str,
    namespace: str,
) -> StateView:
    """The state view of a read's first row (the state and the shared documents) and
    the rows of its window (newest first; ``None``: no window was read with it)."""
    started_at, last_activity_at, in_namespace, stored, mine, shared = first[:6]
    chronicum, state, acta = None, None, None
    if chronicum_id is not None and started_at is not None:
        chronicum = Chronicum(chronicum_id, owner_id, utc(started_at), utc(last_activity_at))
        state = _json(stored) if in_namespace == namespace else None
        if window is not None:
            acta = [actum(chronicum_id, row[6:15]) for row in reversed(window)]
    return StateView(chronicum, state, _json(mine) or {}, _json(shared) or {}, acta)


# What get_state reads of a chronicum and the two shared documents, one row (NULLs for
# what is not there), the timestamps as the dialect reads them fastest; a subquery of
# the one statement for the state and a window of the newest acta.
_READ_AS = """
SELECT {started_at} AS started_at, {last_activity_at} AS last_activity_at,
    c.namespace AS namespace, c.state AS state,
    (SELECT value FROM {states} WHERE namespace = %s AND owner_id = %s) AS mine,
    (SELECT value FROM {states} WHERE namespace = %s AND owner_id = '') AS shared
FROM (SELECT 1 AS one) AS one LEFT JOIN {chronica} c ON c.id = %s AND c.owner_id = %s
"""


def _lock(alias: str, chronicum_id: str, owner_id: str) -> tuple[str | None, Any] | None:
    """Lock the chronicum of ``owner_id`` for this transaction and return its namespace
    and state; ``None`` if it is missing or someone else's."""
    connection = connections[alias]
    with connection.cursor() as cursor:
        if connection.features.can_return_columns_from_insert:
            cursor.execute(_sql(_LOCK_RETURNING, alias), [chronicum_id, owner_id])
            row = cursor.fetchone()
        else:
            cursor.execute(_sql(_LOCK, alias), [chronicum_id, owner_id])
            if not cursor.rowcount:
                return None
            cursor.execute(_sql(_STATE_OF, alias), [chronicum_id])
            row = cursor.fetchone()
    if row is None:
        return None
    return row[0], _json(row[1])


def _json(value: Any) -> Any:
    """A JSON column's value as the ORM would give it (Django's connections hand jsonb
    back as text; psycopg's own, on the asyncio path, decode it). ``raw_decode``: what
    ``json.loads`` calls for a text the database wrote (no whitespace around it),
    without its two wrappers, a third of the time of a listing's small documents."""
    return _decode(value)[0] if isinstance(value, str) else value


_decode = json.JSONDecoder().raw_decode
