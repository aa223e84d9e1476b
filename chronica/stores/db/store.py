"""``DjangoStore``: the store calls, each one plan (or write) in the connection's dialect."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections, router, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from ... import models
from ...errors import ChronicumNotFound
from ...interfaces import Subscription
from ...values import ActaQuery, Actum, Chronicum, Recorded
from . import plans, replicas
from .base import BaseDialect, Database, Plan, run_plan
from .dialects import dialect_of
from .rows import actum, utc
from .state import DjangoStateStore

if TYPE_CHECKING:
    from .conversations import DjangoConversationRecords

__all__ = ["DjangoStore"]

_T = TypeVar("_T")


class DjangoStore(DjangoStateStore):
    """A chronica store on the Django database ``using`` (by default the database the
    routers choose for writing chronica), with every capability of
    ``chronica.interfaces`` (``StateStore`` from ``chronica.stores.db.state``)."""

    supports_windows = True

    def __init__(self, using: str | None = None) -> None:
        self.using = using

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
        make: Callable[[BaseDialect, BaseDatabaseWrapper], Plan[_T]],
        chronicum_id: str | None = None,
    ) -> _T:
        """Run the read plan ``make(dialect, connection)`` on a replica of
        ``CHRONICA["READ_DATABASES"]`` that has replayed this process's writes, else
        on the primary (``chronica.stores.db.replicas``). On the primary too: when
        the replica fails mid-read, when it finds no such chronicum (or none of the
        owner's: it may not have replayed its creation yet), and for a chronicum a
        write of this context found missing (the caller creates it next)."""
        primary = self.alias
        if replicas.read_aliases() and (
            chronicum_id is None or replicas.missing.get() != chronicum_id
        ):
            alias = replicas.ReadRouter(primary).choose()
            if alias != primary:
                replica = connections[alias]
                try:
                    found = self._run(replica, make(dialect_of(replica), replica))
                except DatabaseError:
                    replica.close()
                except ChronicumNotFound:
                    pass
                else:
                    if found is not None:
                        return found
        connection = self._connection(primary)
        return self._run(connection, make(dialect_of(connection), connection))

    async def _aread(self, make: Callable[[BaseDialect, BaseDatabaseWrapper], Plan[_T]]) -> _T:
        """``_read`` on the asyncio path (no connection of Django's is opened)."""
        from .. import pg_async

        alias = await replicas.ReadRouter(self.alias).achoose(pg_async.run)
        if alias != self.alias:
            replica = connections[alias]
            try:
                found = await pg_async.run(alias, make(dialect_of(replica), replica))
            except (DatabaseError, ChronicumNotFound):
                pass
            else:
                if found is not None:
                    return found
        primary = connections[self.alias]
        return await self._arun(make(dialect_of(primary), primary))

    def _written(self, chronicum_id: str | None = None, found: bool = True) -> None:
        """After a write: once it commits, remember where replicas must have replayed
        to show it (only when ``CHRONICA["READ_DATABASES"]`` names replicas)."""
        if chronicum_id is not None:
            replicas.missing.set(None if found else chronicum_id)
        after = replicas.lsn_after_write(self.alias)
        if after is not None:
            transaction.on_commit(after, using=self.alias)

    async def _awritten(self) -> None:
        from .. import pg_async

        if replicas.read_aliases():
            replicas.remember(self.alias, await pg_async.run(self.alias, replicas.lsn_plan()))

    def _dialect(self) -> BaseDialect:
        return dialect_of(connections[self.alias])

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

    def _run(self, connection: BaseDatabaseWrapper, plan: Plan[_T]) -> _T:
        with connection.cursor() as cursor:
            return run_plan(cursor, plan)

    def conversation_records(self) -> DjangoConversationRecords:
        """The records of PydanticAI conversations on this store's database
        (``chronica.interfaces.ConversationRecordStore``)."""
        from .conversations import DjangoConversationRecords

        return DjangoConversationRecords(self.alias)

    def on_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` when the caller's transaction commits (now, if there is none)."""
        transaction.on_commit(callback, using=self.alias)

    # -- Store ----------------------------------------------------------------

    def create(self, chronicum: Chronicum) -> None:
        connection = self._connection()
        dialect_of(connection).create_chronicum(connection, chronicum)
        self._written()

    def get(self, chronicum_id: str) -> Chronicum:
        return self._read(
            lambda dialect, _connection: plans.get_plan(dialect, chronicum_id), chronicum_id
        )

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

    def acta_page_if_owner(
        self, owner_id: str, chronicum_id: str, query: ActaQuery
    ) -> tuple[list[Actum], bool] | None:
        """``acta_if_owner``, and whether an older actum passes the filters, from one
        consistent read (``PagingStore``): one transaction, on PostgreSQL at REPEATABLE
        READ, so a delete or a pop between its statements cannot glue two states of the
        chronicum together."""
        connection = self._connection()
        dialect = dialect_of(connection)
        database = self._database(connection)
        limit = query.last_n if 0 < query.last_n < 2**63 - 1 else 0
        longer = dataclasses.replace(query, last_n=limit + 1) if limit else query

        def read() -> tuple[list[Actum], bool] | None:
            cut = self._run(
                connection, plans.acta_plan(dialect, chronicum_id, longer, owner_id, database)
            )
            if cut is None:
                return None
            if limit and len(cut) > limit:
                return cut[1:], True
            if not cut or (query.max_tokens is None and query.max_bytes is None):
                return cut, False
            older = dataclasses.replace(query, last_n=1, max_tokens=None, before=cut[0].id)
            found = self._run(
                connection, plans.acta_plan(dialect, chronicum_id, older, owner_id, database)
            )
            return cut, bool(found)

        if connection.in_atomic_block:
            return read()  # the caller's transaction is the read
        with transaction.atomic(using=connection.alias):
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            return read()

    def list_chronica(self, owner_id: str, limit: int, after: Chronicum | None) -> list[Chronicum]:
        def listing(dialect: BaseDialect, connection: BaseDatabaseWrapper) -> Plan[list[Chronicum]]:
            params: list[Any] = [owner_id]
            if after is not None:
                at = connection.ops.adapt_datetimefield_value(after.last_activity_at)
                params += [at, at, after.id]
            params.append(limit)
            rows = yield (dialect.list_first if after is None else dialect.list_after), params
            return [Chronicum(row[0], row[1], utc(row[2]), utc(row[3])) for row in rows]

        return self._read(listing)

    def delete(self, chronicum_id: str, owner_id: str) -> None:
        connection = self._connection()
        dialect = dialect_of(connection)

        def delete() -> None:
            with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
                self._lock(dialect, cursor, chronicum_id, owner_id)
                cursor.execute(dialect.delete_acta, [chronicum_id])
                cursor.execute(dialect.delete_chronicum, [chronicum_id])
                dialect.deleted(cursor, chronicum_id)

        dialect.retry_when_locked(connection, delete)
        self._written()

    def pop(self, chronicum_id: str, owner_id: str) -> Actum | None:
        connection = self._connection()
        dialect = dialect_of(connection)

        def pop() -> Actum | None:
            with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
                # Under the chronicum's lock, and in a statement of its own, so that a pop
                # that waited for another sees what that one left.
                self._lock(dialect, cursor, chronicum_id, owner_id)
                cursor.execute(dialect.newest_seq, [chronicum_id])
                newest = cursor.fetchone()
                if newest is None:
                    return None
                cursor.execute(dialect.by_seq, [chronicum_id, newest[0]])
                row = cursor.fetchone()
                cursor.execute(dialect.delete_actum, [chronicum_id, newest[0]])
            return actum(chronicum_id, row)

        popped = dialect.retry_when_locked(connection, pop)
        self._written()
        return popped

    # -- following --------------------------------------------------------------

    def follow_position(self, owner_id: str, chronicum_id: str, after: str | None) -> int | None:
        """The seq of the actum ``after``, or the newest seq now; ``None`` if the
        chronicum is missing or not ``owner_id``'s."""
        connection = self._connection()
        plan = plans.position_plan(dialect_of(connection), owner_id, chronicum_id, after)
        return self._run(connection, plan)

    def acta_after(
        self, owner_id: str, chronicum_id: str, query: ActaQuery, position: int, limit: int
    ) -> tuple[list[Actum], int] | tuple[list[Actum], int, bool] | None:
        """The acta after seq ``position`` that pass the filters, and the seq to read
        from next (see ``FollowingStore``), in one statement."""
        connection = self._connection()
        dialect = dialect_of(connection)
        plan = plans.after_plan(dialect, owner_id, chronicum_id, query, position, limit)
        return self._run(connection, plan)

    def subscribe(self, chronicum_id: str) -> Subscription | None:
        """On PostgreSQL, wake-ups from this process's one LISTEN connection; elsewhere
        ``None`` (followers poll)."""
        return self._dialect().subscribe(self.alias, chronicum_id)

    # -- the asyncio path (PostgreSQL) -------------------------------------------

    def supports_async(self) -> bool:
        """On PostgreSQL with psycopg_pool installed, the ``a*`` methods run the same
        plans on psycopg's async connections (``chronica.stores.pg_async``)."""
        return self._dialect().supports_async()

    async def aget(self, chronicum_id: str) -> Chronicum:
        return await self._aread(lambda dialect, _connection: plans.get_plan(dialect, chronicum_id))

    async def arecord_batch_if_owner(
        self,
        owner_id: str,
        acta: Sequence[Actum],
        key: str | None,
        tokens: Sequence[int | None],
    ) -> Recorded | None:
        plan = plans.record_plan(self._dialect(), acta, key, tokens, owner_id, self._database())
        recorded = await self._arun(plan)
        replicas.missing.set(None if recorded is not None else acta[0].chronicum_id)
        await self._awritten()
        return recorded

    async def aacta_if_owner(
        self, owner_id: str, chronicum_id: str, query: ActaQuery
    ) -> list[Actum] | None:
        return await self._aread(
            lambda dialect, connection: plans.acta_plan(
                dialect, chronicum_id, query, owner_id, self._database(connection)
            )
        )

    async def afollow_position(
        self, owner_id: str, chronicum_id: str, after: str | None
    ) -> int | None:
        return await self._arun(plans.position_plan(self._dialect(), owner_id, chronicum_id, after))

    async def aacta_after(
        self, owner_id: str, chronicum_id: str, query: ActaQuery, position: int, limit: int
    ) -> tuple[list[Actum], int] | tuple[list[Actum], int, bool] | None:
        dialect = self._dialect()
        return await self._arun(
            plans.after_plan(dialect, owner_id, chronicum_id, query, position, limit)
        )

    async def _arun(self, plan: Plan[_T]) -> _T:
        from .. import pg_async

        return await pg_async.run(self.alias, plan)

    # -- reading and writing ----------------------------------------------------

    def _acta(
        self, chronicum_id: str, query: ActaQuery, owner_id: str | None
    ) -> list[Actum] | None:
        return self._read(
            lambda dialect, connection: plans.acta_plan(
                dialect, chronicum_id, query, owner_id, self._database(connection)
            ),
            chronicum_id,
        )

    def _record(
        self,
        acta: Sequence[Actum],
        key: str | None,
        tokens: Sequence[int | None],
        owner_id: str | None,
    ) -> Recorded | None:
        connection = self._connection()
        dialect = dialect_of(connection)
        if dialect.writes_in_one_statement:
            database = self._database(connection)
            plan = plans.record_plan(dialect, acta, key, tokens, owner_id, database)
            recorded = self._run(connection, plan)
        else:
            recorded = dialect.retry_when_locked(
                connection,
                lambda: plans.record_in_transaction(
                    dialect, connection, acta, key, tokens, owner_id
                ),
            )
        self._written(acta[0].chronicum_id, recorded is not None)
        return recorded

    @staticmethod
    def _lock(dialect: BaseDialect, cursor: Any, chronicum_id: str, owner_id: str) -> None:
        """Take the chronicum's row lock (SQLite: the database's write lock), or raise
        ``ChronicumNotFound`` if it is not ``owner_id``'s."""
        if not dialect.lock_chronicum(cursor, chronicum_id, owner_id):
            raise ChronicumNotFound(chronicum_id)
