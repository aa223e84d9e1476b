"""``DjangoStore``: each store call, one statement (or one short transaction) in the
dialect of the connection it runs on."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections, router, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from ... import models
from ...errors import ChronicumNotFound
from ...interfaces import BaseStore, Create, FollowPage, Subscription, WindowPage
from ...search import SearchQuery
from ...values import (
    ActaQuery,
    Actum,
    Chronicum,
    Erasure,
    NamespaceListing,
    Recorded,
    SearchHit,
    StateChange,
    StateView,
)
from . import compaction, forgetting, replicas, state
from .base import BaseDialect
from .dialects import dialect_of
from .rows import Streamed, acta_of, utc

__all__ = ["DjangoStore"]

_T = TypeVar("_T")
Read = tuple[tuple[str, Any], Callable[[list[tuple[Any, ...]]], _T]]
"""A read: its statement (text and parameters) and what turns its rows into the answer."""


class DjangoStore(BaseStore):
    """A chronica store on the Django database ``using`` (by default the database the
    routers choose for writing chronica), with every ability of
    ``chronica.interfaces.BaseStore``. Reads may go to ``CHRONICA["READ_DATABASES"]``
    (``replicas``); writes, pops, deletes and follows stay on the primary."""

    supports_append = True
    supports_window = True
    supports_listing = True
    supports_delete = True
    supports_pop = True
    supports_follow = True
    supports_state = True
    supports_fork = True
    supports_compaction = True
    supports_forget = True

    def __init__(self, using: str | None = None) -> None:
        self.using = using

    @property
    def supports_search(self) -> bool:  # type: ignore[override]
        """Whether the database searches (PostgreSQL, SQLite: ``search.py``)."""
        return dialect_of(connections[self.alias]).searches

    def __repr__(self) -> str:
        return f"<DjangoStore using={self.using!r}>"

    @property
    def alias(self) -> str:
        return self.using or router.db_for_write(models.Chronicum) or DEFAULT_DB_ALIAS

    def _connection(self, alias: str | None = None) -> BaseDatabaseWrapper:
        connection = connections[self.alias if alias is None else alias]
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

    def _read(
        self,
        make: Callable[[BaseDialect, BaseDatabaseWrapper], Read[_T]],
        found: Callable[[_T], bool] = lambda _answer: True,
    ) -> _T:
        """One read, ``make(dialect, connection)``: its statement and what turns its rows
        into the answer. Where the routers send it (``chronica.routers.ReplicaRouter``: a
        replica of ``CHRONICA["READ_DATABASES"]`` that has replayed this process's writes),
        else on the primary; on the primary too when the replica
        fails, or does not find (``found``) what the read asked for (it may not have
        replayed its creation yet)."""
        primary = self.alias
        if replicas.read_aliases() and self.using is None:
            alias = router.db_for_read(models.Chronicum) or primary
            if alias != primary and alias in replicas.read_aliases():
                replica = connections[alias]
                try:
                    answered = self._run(replica, make)
                except DatabaseError:
                    replica.close()
                except ChronicumNotFound:
                    pass
                else:
                    if found(answered):
                        return answered
        return self._run(self._connection(primary), make)

    @staticmethod
    def _run(
        connection: BaseDatabaseWrapper,
        make: Callable[[BaseDialect, BaseDatabaseWrapper], Read[_T]],
    ) -> _T:
        dialect = dialect_of(connection)
        (text, params), answer = make(dialect, connection)
        with dialect.cursor(connection) as cursor:
            cursor.execute(text, params)
            if not isinstance(answer, Streamed):
                return answer(cursor.fetchall())
            taken = answer.take(cursor)
        return answer.answer(taken)  # type: ignore[no-any-return]

    def _written(self) -> None:
        """After a write: once it commits, remember where replicas must have replayed
        to show it (only when ``CHRONICA["READ_DATABASES"]`` names replicas)."""
        replicas.written(self.alias)

    def on_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` when the caller's transaction commits (now, if there is none)."""
        transaction.on_commit(callback, using=self.alias)

    # -- the seed's store ---------------------------------------------------------

    def create(self, chronicum: Chronicum) -> None:
        connection = self._connection()
        dialect_of(connection).create_chronicum(connection, chronicum)
        self._written()

    def get(self, chronicum_id: str) -> Chronicum:
        def answer(rows: list[tuple[Any, ...]]) -> Chronicum:
            if not rows:
                raise ChronicumNotFound(chronicum_id)
            owner_id, started_at, last_activity_at = rows[0]
            return Chronicum(chronicum_id, owner_id, utc(started_at), utc(last_activity_at))

        params = {"chronicum_id": chronicum_id}
        return self._read(lambda dialect, _: ((dialect.statement("GET"), params), answer))

    # -- the abilities -------------------------------------------------------------

    def append(
        self,
        owner_id: str | None,
        chronicum_id: str,
        acta: Sequence[Actum],
        *,
        key: str | None = None,
        tokens: Sequence[int | None] | None = None,
        state: Sequence[StateChange] = (),
        create: Create | None = None,
        credential: str | None = None,
    ) -> Recorded | None:
        connection = self._connection()
        dialect = dialect_of(connection)
        counts = [None] * len(acta) if tokens is None else tokens
        if state or create == "new":
            assert owner_id is not None, "state is always an owner's"
            recorded = state_write(
                dialect,
                connection,
                owner_id,
                chronicum_id,
                acta,
                key,
                counts,
                state,
                create,
                credential,
            )
        elif not acta:
            return Recorded([])
        else:
            recorded = dialect.append(
                connection, owner_id, chronicum_id, acta, key, counts, create, credential
            )
        if recorded is not None:
            self._written()
        return recorded

    def window(
        self, owner_id: str | None, chronicum_id: str, query: ActaQuery
    ) -> WindowPage | None:
        if query.compacted:
            if compaction.walkable(query):
                # Most windows of a compacted session end after its newest compaction:
                # the plain window, as long as it meets no actum of a compaction
                # (benchmark case 30; compaction.walkable says when that holds).
                plain = dataclasses.replace(query, compacted=False)
                found = self._read(
                    lambda dialect, _: dialect.window(owner_id, chronicum_id, plain),
                    lambda page: page is not None,
                )
                if found is None or not any(actum.compacts for actum in found[0]):
                    return found
            try:
                return self._read(
                    lambda dialect, _: compaction.window(dialect, owner_id, chronicum_id, query),
                    lambda page: page is not None,
                )
            except compaction.ReadWhole:
                return self._read(
                    lambda dialect, _: compaction.window(
                        dialect, owner_id, chronicum_id, query, whole=True
                    ),
                    lambda page: page is not None,
                )
        return self._read(
            lambda dialect, _: dialect.window(owner_id, chronicum_id, query),
            lambda page: page is not None,
        )

    def list_chronica(self, owner_id: str, limit: int, after: Chronicum | None) -> list[Chronicum]:
        def answer(rows: list[tuple[Any, ...]]) -> list[Chronicum]:
            return [Chronicum(row[0], row[1], utc(row[2]), utc(row[3])) for row in rows]

        return self._read(
            lambda dialect, connection: (
                dialect.listing(connection, owner_id, limit, after),
                answer,
            )
        )

    def delete(self, owner_id: str, chronicum_id: str) -> bool:
        connection = self._connection()
        dialect = dialect_of(connection)
        params = {"chronicum_id": chronicum_id, "owner_id": owner_id}

        def delete() -> bool:
            with transaction.atomic(using=connection.alias), dialect.cursor(connection) as cursor:
                if not dialect.lock_chronicum(cursor, owner_id, chronicum_id):
                    return False
                cursor.execute(dialect.statement("DELETE_ACTA"), params)
                cursor.execute(dialect.statement("DELETE_CHRONICUM"), params)
                dialect.deleted(cursor, chronicum_id)
            return True

        deleted = dialect.retry_when_locked(connection, delete)
        self._written()
        return deleted

    def pop(self, owner_id: str, chronicum_id: str) -> Actum | None:
        connection = self._connection()
        dialect = dialect_of(connection)
        params = {"chronicum_id": chronicum_id, "owner_id": owner_id}

        def pop() -> Actum | None:
            # Under the chronicum's lock, so that a pop that waited for another sees
            # what that one left.
            with transaction.atomic(using=connection.alias), dialect.cursor(connection) as cursor:
                if not dialect.lock_chronicum(cursor, owner_id, chronicum_id):
                    raise ChronicumNotFound(chronicum_id)
                cursor.execute(dialect.statement("POP"), params)
                rows = cursor.fetchall()
            return acta_of(chronicum_id, rows)[0] if rows else None

        popped = dialect.retry_when_locked(connection, pop)
        self._written()
        return popped

    def acta_after(
        self,
        owner_id: str,
        chronicum_id: str,
        query: ActaQuery,
        position: int | str | None,
        limit: int,
    ) -> FollowPage | None:
        connection = self._connection()
        dialect = dialect_of(connection)
        (text, params), page = dialect.after(owner_id, chronicum_id, query, position, limit)
        with dialect.cursor(connection) as cursor:
            cursor.execute(text, params)
            return page(cursor.fetchall())

    def subscribe(self, chronicum_id: str) -> Subscription | None:
        """On PostgreSQL, wake-ups from this process's one LISTEN connection; elsewhere
        ``None`` (followers poll)."""
        return dialect_of(connections[self.alias]).subscribe(self.alias, chronicum_id)

    def read_state(
        self,
        owner_id: str,
        namespace: str,
        chronicum_id: str | None,
        query: ActaQuery | None,
    ) -> StateView:
        connection = self._connection()
        return state.read_state(
            dialect_of(connection), connection, owner_id, namespace, chronicum_id, query
        )

    def list_namespace(self, owner_id: str | None, namespace: str) -> NamespaceListing:
        connection = self._connection()
        return state.list_namespace(dialect_of(connection), connection, owner_id, namespace)

    def search(
        self,
        owner_id: str,
        query: SearchQuery,
        filters: ActaQuery,
        *,
        chronica: frozenset[str] | None = None,
        limit: int = 20,
        offset: int = 0,
        namespace: str | None = None,
    ) -> list[SearchHit]:
        from ...conf import chronica_settings

        config = chronica_settings.SEARCH_CONFIG
        return self._read(
            lambda dialect, _: dialect.search(
                config, owner_id, query, filters, chronica, limit, offset, namespace
            )
        )

    def compact(
        self,
        owner_id: str | None,
        chronicum_id: str,
        acta: Sequence[Actum],
        through: str,
        *,
        key: str | None = None,
        tokens: Sequence[int | None] | None = None,
        credential: str | None = None,
    ) -> Recorded | None:
        connection = self._connection()
        counts = [None] * len(acta) if tokens is None else tokens
        recorded = compaction.compact(
            dialect_of(connection),
            connection,
            owner_id,
            chronicum_id,
            acta,
            through,
            key,
            counts,
            credential,
        )
        if recorded is not None:
            self._written()
        return recorded

    def fork(
        self, owner_id: str, chronicum_id: str, through: str | None, new: Chronicum
    ) -> Chronicum | None:
        connection = self._connection()
        forked = compaction.fork(
            dialect_of(connection), connection, owner_id, chronicum_id, through, new
        )
        if forked is not None:
            self._written()
        return forked

    # -- forgetting (``forgetting``) ----------------------------------------------

    def redact(
        self, owner_id: str, chronicum_id: str, actum_id: str, *, reason: str, at: dt.datetime
    ) -> Actum | None:
        connection = self._connection()
        dialect = dialect_of(connection)
        params = {
            "chronicum_id": chronicum_id,
            "owner_id": owner_id,
            "actum_id": actum_id,
            "reason": reason,
            "at": dialect.time(connection, at),
        }

        def redact() -> Actum | None:
            rows = dialect.redact(connection, params)
            return acta_of(chronicum_id, rows[:1])[0] if rows else None

        redacted = dialect.retry_when_locked(connection, redact)
        self._written()
        if redacted is not None:
            dialect.forget_in_index(connection)
        return redacted

    def redactions(
        self, owner_id: str, chronicum_id: str, since: dt.datetime, position: int
    ) -> list[Actum]:
        return forgetting.redactions(self._connection(), owner_id, chronicum_id, since, position)

    def erase(
        self,
        owner_id: str,
        *,
        reason: str,
        dry_run: bool = False,
        before_commit: Callable[[bool], Mapping[str, int]] | None = None,
    ) -> Erasure:
        connection = self._connection()
        erasure = forgetting.erase(
            connection, owner_id, reason=reason, dry_run=dry_run, before_commit=before_commit
        )
        self._written()
        if not dry_run:
            dialect_of(connection).forget_in_index(connection)
        return erasure

    def expire(
        self,
        action: str,
        cutoff: dt.datetime,
        kinds: frozenset[str],
        *,
        reason: str,
        dry_run: bool = False,
    ) -> dict[str, int]:
        connection = self._connection()
        done = forgetting.expire(connection, action, cutoff, kinds, reason=reason, dry_run=dry_run)
        self._written()
        if not dry_run and any(done.values()):
            dialect_of(connection).forget_in_index(connection)
        return done


state_write = state.write
