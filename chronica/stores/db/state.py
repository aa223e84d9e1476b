"""State on a Django database: a chronicum's state in its own row (columns ``namespace``
and ``state`` of ``chronica``), owner and namespace state in ``chronica_states``,
written in the transaction that appends the acta.

Lock order, the same for every writer so that none waits for another in a circle: the
chronicum's row first (an UPDATE, which on SQLite also takes the database's write
lock before anything is read), then the shared documents in key order.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

from django.db import IntegrityError, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from ... import models
from ...errors import ChronicumExists, StateConflict
from ...interfaces import Create
from ...states import Document, DocumentKey, apply_all, document_key
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
from . import sql
from .base import BaseDialect
from .rows import acta_of, utc

__all__ = ["list_namespace", "read_state", "write"]


def write(
    dialect: BaseDialect,
    connection: BaseDatabaseWrapper,
    owner_id: str,
    chronicum_id: str,
    acta: Sequence[Actum],
    key: str | None,
    tokens: Sequence[int | None],
    changes: Sequence[StateChange],
    create: Create | None,
    credential: str | None = None,
) -> Recorded | None:
    """``DjangoStore.append`` with state changes (or creating a new chronicum): one
    transaction, the chronicum's lock first (with the credential's check)."""
    alias = connection.alias

    def transact() -> Recorded | None:
        with transaction.atomic(using=alias):
            if create == "new":
                now = dt.datetime.now(dt.UTC)
                dialect.create_in_transaction(
                    connection, Chronicum(chronicum_id, owner_id, now, now)
                )
            locked = _lock(dialect, connection, owner_id, chronicum_id, credential)
            if locked is None and create == "missing":
                now = dt.datetime.now(dt.UTC)
                try:
                    dialect.create_in_transaction(
                        connection, Chronicum(chronicum_id, owner_id, now, now)
                    )
                except ChronicumExists:
                    return None  # taken meanwhile: by another owner, or ask again
                locked = _lock(dialect, connection, owner_id, chronicum_id, credential)
            if locked is None:
                with dialect.cursor(connection) as cursor:
                    dialect.check_credential(connection, cursor, credential)
                return None
            namespace, state = locked
            recorded = Recorded([])
            if acta:
                appended = dialect.append(
                    connection, owner_id, chronicum_id, acta, key, tokens, None
                )
                assert appended is not None  # the chronicum is locked and the owner's
                if appended.replayed:
                    return appended
                recorded = appended
            _change(alias, owner_id, chronicum_id, namespace, state, changes)
            return recorded

    return dialect.retry_when_locked(connection, transact)


def _change(
    alias: str,
    owner_id: str,
    chronicum_id: str,
    namespace: str | None,
    state: Any,
    changes: Sequence[StateChange],
) -> None:
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
            models.Chronicum.objects.using(alias).filter(id=chronicum_id).update(
                namespace=ns, state=document
            )
        else:
            models.SharedState.objects.using(alias).filter(namespace=ns, owner_id=subject).update(
                value=document, updated_at=now
            )


def _lock(
    dialect: BaseDialect,
    connection: BaseDatabaseWrapper,
    owner_id: str,
    chronicum_id: str,
    credential: str | None,
) -> tuple[str | None, Any] | None:
    """Lock the chronicum of ``owner_id`` for this transaction and return its namespace
    and state; ``None`` if it is missing or someone else's (or the credential the write
    is made with is not valid any more)."""
    params = {
        "chronicum_id": chronicum_id,
        "owner_id": owner_id,
        "credential": credential,
        "erasing": owner_id,  # (sql.CREDENTIAL_OK: no erasure of the owner under way)
        "now": dialect.time(connection, dt.datetime.now(dt.UTC)),
    }
    with dialect.cursor(connection) as cursor:
        cursor.execute(dialect.statement("STATE_LOCK"), params)
        row = cursor.fetchone()
    if row is None:
        return None
    return row[0], _json(row[1])


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


def read_state(
    dialect: BaseDialect,
    connection: BaseDatabaseWrapper,
    owner_id: str,
    namespace: str,
    chronicum_id: str | None,
    query: ActaQuery | None,
) -> StateView:
    """The state and, with a ``query``, the chronicum's window, in one statement: one
    round trip, one snapshot."""
    params: dict[str, Any] = {
        "namespace": namespace,
        "owner_id": owner_id,
        "chronicum_id": chronicum_id or "",
    }
    text = dialect.statement("STATE_READ")
    page, newest = None, False
    if chronicum_id is not None and query is not None:
        newest = query == ActaQuery(last_n=query.last_n)
        if newest:
            # The newest acta alone (what get_state asks): one join.
            last_n = sql.row_limit(query.last_n)
            limit = "" if last_n is None else " LIMIT CAST(%(last_n)s AS BIGINT)"
            params["last_n"] = last_n
            text = dialect.statement("STATE_READ_ACTA").format(limit=limit)
        else:
            (window, window_params), page = dialect.window(owner_id, chronicum_id, query)
            params.update(window_params)
            text = (
                f"SELECT s.*, w.* FROM ({text}) s LEFT JOIN ({window}) w ON 1 = 1"
                " ORDER BY w.w_seq DESC"
            )
    with dialect.cursor(connection) as cursor:
        cursor.execute(text, params)
        rows = cursor.fetchall()
    started_at, last_activity_at, in_namespace, stored, mine, shared = rows[0][:6]
    chronicum, state, acta = None, None, None
    if chronicum_id is not None and started_at is not None:
        chronicum = Chronicum(chronicum_id, owner_id, utc(started_at), utc(last_activity_at))
        state = _json(stored) if in_namespace == namespace else None
        if newest:
            acta = acta_of(chronicum_id, [row[6:] for row in rows if row[-1] is not None])
        elif page is not None:
            found = page([row[6:] for row in rows])
            acta = None if found is None else found[0]
    return StateView(chronicum, state, _json(mine) or {}, _json(shared) or {}, acta)


def list_namespace(
    dialect: BaseDialect, connection: BaseDatabaseWrapper, owner_id: str | None, namespace: str
) -> NamespaceListing:
    mine = owner_id is not None
    params = {"namespace": namespace, "owner_id": owner_id}
    with dialect.cursor(connection) as cursor:
        cursor.execute(dialect.statement("STATE_LISTING_MINE" if mine else "STATE_LISTING"), params)
        listed = [
            (Chronicum(cid, owner, utc(started_at), utc(last_activity_at)), _json(state) or {})
            for cid, owner, started_at, last_activity_at, state in cursor.fetchall()
        ]
        cursor.execute(dialect.statement("STATE_SHARED_MINE" if mine else "STATE_SHARED"), params)
        shared: dict[str, Any] = {subject: _json(value) for subject, value in cursor.fetchall()}
    namespace_state = shared.pop("", {})
    return NamespaceListing(listed, shared, namespace_state)


def _json(value: Any) -> Any:
    """A JSON column's value as the ORM would give it (Django's connections hand JSON
    back as text)."""
    return json.loads(value) if isinstance(value, str) else value
