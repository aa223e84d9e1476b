"""``StateStore`` on a Django database: a chronicum's state in its own row (columns
``namespace`` and ``state`` of ``chronica``), owner and namespace state in
``chronica_states``, written in the transaction that appends the acta.

Lock order, the same for every writer so that none waits for another in a circle: the
chronicum's row first (an UPDATE, which on SQLite also takes the database's write
lock before anything is read), then the shared documents in key order.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, connections, transaction

from ... import models
from ...errors import ChronicumExists, StateConflict
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
from .dialects import retry_when_locked

if TYPE_CHECKING:
    from django.db.backends.base.base import BaseDatabaseWrapper

__all__ = ["DjangoStateStore"]


def _utc(value: dt.datetime) -> dt.datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


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

        def acta_if_owner(
            self, owner_id: str, chronicum_id: str, query: ActaQuery
        ) -> list[Actum] | None: ...

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
        alias = self._connection().alias
        chronicum, state, acta = None, None, None
        row = _read(alias, owner_id, namespace, chronicum_id)
        started_at, last_activity_at, in_namespace, stored, owner_state, namespace_state = row
        if chronicum_id is not None and started_at is not None:
            chronicum = Chronicum(chronicum_id, owner_id, _utc(started_at), _utc(last_activity_at))
            state = stored if in_namespace == namespace else None
            if query is not None:
                acta = self.acta_if_owner(owner_id, chronicum_id, query)
        return StateView(chronicum, state, owner_state or {}, namespace_state or {}, acta)

    def list_namespace(self, namespace: str, owner_id: str | None) -> NamespaceListing:
        alias = self._connection().alias
        rows = models.Chronicum.objects.using(alias).filter(namespace=namespace)
        documents = models.SharedState.objects.using(alias).filter(namespace=namespace)
        if owner_id is not None:
            rows = rows.filter(owner_id=owner_id)
            documents = documents.filter(owner_id__in=[owner_id, ""])
        listed = [
            (Chronicum(cid, owner, _utc(started_at), _utc(last_activity_at)), state or {})
            for cid, owner, started_at, last_activity_at, state in rows.order_by(
                "last_activity_at", "owner_id", "id"
            ).values_list("id", "owner_id", "started_at", "last_activity_at", "state")
        ]
        shared: dict[str, Any] = dict(documents.values_list("owner_id", "value"))
        namespace_state = shared.pop("", {})
        return NamespaceListing(listed, shared, namespace_state)


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


def _sql(template: str, alias: str) -> str:
    """``template`` with the tables and columns of chronica's models, quoted."""
    quote = connections[alias].ops.quote_name
    return template.format(
        chronica=quote(models.Chronicum._meta.db_table),
        states=quote(models.SharedState._meta.db_table),
    )


# The chronicum's lock (a write: on SQLite it takes the database's write lock) and its
# state, in one statement where the database can return rows from an UPDATE.
_LOCK_RETURNING = (
    "UPDATE {chronica} SET owner_id = owner_id WHERE id = %s AND owner_id = %s"
    " RETURNING namespace, state"
)
_LOCK = "UPDATE {chronica} SET owner_id = owner_id WHERE id = %s AND owner_id = %s"
_STATE_OF = "SELECT namespace, state FROM {chronica} WHERE id = %s"

# What get_state reads of a chronicum and the two shared documents, in one statement
# (a window is the store's own statement): one row, NULLs for what is not there.
_READ = """
SELECT c.started_at, c.last_activity_at, c.namespace, c.state,
    (SELECT value FROM {states} WHERE namespace = %s AND owner_id = %s),
    (SELECT value FROM {states} WHERE namespace = %s AND owner_id = '')
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
    return row[0], _json(connection, row[1])


def _read(alias: str, owner_id: str, namespace: str, chronicum_id: str | None) -> tuple[Any, ...]:
    connection = connections[alias]
    with connection.cursor() as cursor:
        cursor.execute(
            _sql(_READ, alias), [namespace, owner_id, namespace, chronicum_id or "", owner_id]
        )
        started_at, last_activity_at, in_namespace, state, mine, shared = cursor.fetchone()
    if started_at is not None and isinstance(started_at, str):
        started_at = dt.datetime.fromisoformat(started_at)
        last_activity_at = dt.datetime.fromisoformat(last_activity_at)
    return (
        started_at,
        last_activity_at,
        in_namespace,
        _json(connection, state),
        _json(connection, mine),
        _json(connection, shared),
    )


def _json(connection: BaseDatabaseWrapper, value: Any) -> Any:
    """A JSON column's value as the ORM would give it (psycopg decodes jsonb itself)."""
    return json.loads(value) if isinstance(value, str) else value
