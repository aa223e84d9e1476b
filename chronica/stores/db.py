"""``DjangoStore``: chronica on any Django database (PostgreSQL and SQLite are tested).

Reads are one SQL statement on every database. On PostgreSQL a write is one
statement too (insert the actum and bump the chronicum together); other
databases take the ORM path inside a transaction that starts with a write, so
SQLite writers queue on the busy timeout instead of failing with "database is
locked". Values are always passed as parameters, never formatted into SQL.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from django.db import DEFAULT_DB_ALIAS, IntegrityError, connections, router, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import F
from django.utils.dateparse import parse_datetime

from .. import models
from ..errors import ChronicumExists, ChronicumNotFound
from ..values import ActaQuery, ActorKind, Actum, ActumKind, Chronicum

__all__ = ["DjangoStore"]

_KINDS = {k.value: k for k in ActumKind}
_ACTOR_KINDS = {k.value: k for k in ActorKind}

_PG_RECORD = """
WITH ins AS (
    INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at, idempotency_key)
    SELECT %s, c.id, %s, %s, %s, %s, clock_timestamp(), %s FROM chronica c WHERE c.id = %s{owner}
    {on_conflict}
    RETURNING chronicum_id, at
), upd AS (
    UPDATE chronica SET last_activity_at = GREATEST(chronica.last_activity_at, ins.at)
    FROM ins WHERE chronica.id = ins.chronicum_id
)
SELECT at FROM ins
"""
_ON_CONFLICT = (
    "ON CONFLICT (chronicum_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING"
)
# Keyed by (with an idempotency key, only into the given owner's chronicum).
_PG_RECORDS = {
    (keyed, owned): _PG_RECORD.format(
        on_conflict=_ON_CONFLICT if keyed else "", owner=" AND c.owner_id = %s" if owned else ""
    )
    for keyed in (False, True)
    for owned in (False, True)
}
_PG_CREATE = (
    "INSERT INTO chronica (id, owner_id, started_at, last_activity_at)"
    " VALUES (%s, %s, %s, %s) ON CONFLICT (id) DO NOTHING"
)
_GET = "SELECT owner_id, started_at, last_activity_at FROM chronica WHERE id = %s"
_EXISTS = "SELECT 1 FROM chronica WHERE id = %s"
_EXISTS_OWNED = "SELECT 1 FROM chronica WHERE id = %s AND owner_id = %s"
_BY_KEY = (
    "SELECT id, kind, actor_kind, actor, content, at FROM acta"
    " WHERE chronicum_id = %s AND idempotency_key = %s"
)
_BY_KEY_OWNED = (
    "SELECT a.id, a.kind, a.actor_kind, a.actor, a.content, a.at"
    " FROM acta a JOIN chronica c ON c.id = a.chronicum_id"
    " WHERE a.chronicum_id = %s AND a.idempotency_key = %s AND c.owner_id = %s"
)


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
# Read as microseconds since the epoch: exact (EXTRACT gives a numeric since PostgreSQL
# 14), and an int becomes a datetime in a tenth of the time Django's timestamptz loader,
# written in Python, spends parsing one (nearly half the client CPU of a 20-acta read).
_PG_AT_MICROS = "(EXTRACT(EPOCH FROM at) * 1000000)::bigint"


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


_new = object.__new__
# The slot descriptors of the frozen Actum, called directly: 0.5 us an actum instead
# of 0.9 us through object.__setattr__, which looks each one up again.
(_set_chronicum_id, _set_kind, _set_actor_kind, _set_actor, _set_content, _set_id, _set_at) = (
    getattr(Actum, name).__set__
    for name in ("chronicum_id", "kind", "actor_kind", "actor", "content", "id", "at")
)


def _actum(chronicum_id: str, row: tuple[Any, ...]) -> Actum:
    # A window is built dozens of acta at a time, and the frozen dataclass's __init__
    # and __post_init__ (which turn strings into members) cost more than all the rest
    # of building one; these values come from our own columns and need no turning.
    actum = _new(Actum)
    _set_chronicum_id(actum, chronicum_id)
    _set_kind(actum, _KINDS[row[1]])
    _set_actor_kind(actum, _ACTOR_KINDS[row[2]])
    _set_actor(actum, row[3])
    _set_content(actum, row[4])
    _set_id(actum, row[0])
    _set_at(actum, _utc(row[5]))
    return actum


def _window_sql(
    chronicum_id: str, query: ActaQuery, owner_id: str | None = None, *, at: str = "at"
) -> tuple[str, list[Any]]:
    """The context window in one statement: the newest acta that pass the filters, up
    to the limit, newest first (the caller turns them back). Given ``owner_id``, no
    actum is read unless the chronicum is that owner's."""
    # A range and a two-column ORDER BY, not "chronicum_id = %s ORDER BY seq": with the
    # equality PostgreSQL may walk the primary key backwards and filter, reading every
    # newer actum of every other chronicum (0.3 s on a 100k session under a 1M one).
    # Only the (chronicum_id, seq) index can serve this order.
    where = ["chronicum_id >= %s AND chronicum_id <= %s"]
    params = list[Any]([chronicum_id, chronicum_id])
    for column, values in (("kind", query.kinds), ("actor_kind", query.actor_kinds)):
        if values:
            where.append(f"{column} IN ({', '.join(['%s'] * len(values))})")
            params.extend(sorted(str(v) for v in values))
    if owner_id is not None:
        where.append("EXISTS (SELECT 1 FROM chronica WHERE id = %s AND owner_id = %s)")
        params += [chronicum_id, owner_id]
    limit = ""
    # A limit beyond any BIGINT is no limit; the database would refuse it as out of range.
    if 0 < query.last_n < 2**63:
        limit = " LIMIT %s"
        params.append(query.last_n)
    # Simpler than a join with the chronicum (which would tell a missing chronicum from
    # an empty window in the same statement): planning it costs PostgreSQL ~20 us less,
    # 8% of a 20-acta read. Only an empty window pays a second, tiny query.
    sql = (
        f"SELECT id, kind, actor_kind, actor, content, {at} FROM acta"
        f" WHERE {' AND '.join(where)} ORDER BY chronicum_id DESC, seq DESC{limit}"
    )
    return sql, params


class DjangoStore:
    """An ``IdempotentStore`` on the Django database ``using`` (by default the
    database the routers choose for writing chronica)."""

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

    # -- Store ----------------------------------------------------------------

    def create(self, chronicum: Chronicum) -> None:
        connection = self._connection()
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(
                    _PG_CREATE,
                    [
                        chronicum.id,
                        chronicum.owner_id,
                        chronicum.started_at,
                        chronicum.last_activity_at,
                    ],
                )
                if cursor.rowcount == 0:
                    raise ChronicumExists(chronicum.id)
            return
        try:
            with transaction.atomic(using=connection.alias):
                models.Chronicum.objects.using(connection.alias).create(
                    id=chronicum.id,
                    owner_id=chronicum.owner_id,
                    started_at=chronicum.started_at,
                    last_activity_at=chronicum.last_activity_at,
                )
        except IntegrityError:
            if models.Chronicum.objects.using(connection.alias).filter(pk=chronicum.id).exists():
                raise ChronicumExists(chronicum.id) from None
            raise

    def get(self, chronicum_id: str) -> Chronicum:
        with self._connection().cursor() as cursor:
            cursor.execute(_GET, [chronicum_id])
            row = cursor.fetchone()
        if row is None:
            raise ChronicumNotFound(chronicum_id)
        return Chronicum(chronicum_id, row[0], _utc(row[1]), _utc(row[2]))

    def record(self, actum: Actum) -> Actum:
        return self._record(actum, None, None)

    def record_idempotent(self, actum: Actum, key: str) -> Actum:
        return self._record(actum, key, None)

    def acta(self, chronicum_id: str, query: ActaQuery) -> list[Actum]:
        return self._acta(chronicum_id, query, None)

    # -- owner-scoped shortcuts ------------------------------------------------
    # Chronicarius uses these when a store has them: the owner's check and the read
    # or write in one statement instead of two. The store still decides nothing;
    # Chronicarius tells a missing chronicum from another owner's.

    def record_if_owner(self, owner_id: str, actum: Actum, key: str | None) -> Actum | None:
        """``record`` (``record_idempotent`` given ``key``), done only if the chronicum
        exists and belongs to ``owner_id``; otherwise ``None`` and nothing is written."""
        try:
            return self._record(actum, key, owner_id)
        except ChronicumNotFound:
            return None

    def acta_if_owner(
        self, owner_id: str, chronicum_id: str, query: ActaQuery
    ) -> list[Actum] | None:
        """``acta``, read only if the chronicum exists and belongs to ``owner_id``;
        otherwise ``None`` and no actum is read."""
        try:
            return self._acta(chronicum_id, query, owner_id)
        except ChronicumNotFound:
            return None

    def _acta(self, chronicum_id: str, query: ActaQuery, owner_id: str | None) -> list[Actum]:
        connection = self._connection()
        at = _PG_AT_MICROS if connection.vendor == "postgresql" else "at"
        sql, params = _window_sql(chronicum_id, query, owner_id, at=at)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
            if not rows:
                # An empty window, or no such chronicum (of this owner)?
                if owner_id is None:
                    cursor.execute(_EXISTS, [chronicum_id])
                else:
                    cursor.execute(_EXISTS_OWNED, [chronicum_id, owner_id])
                if cursor.fetchone() is None:
                    raise ChronicumNotFound(chronicum_id)
                return []
        rows.reverse()
        return [_actum(chronicum_id, row) for row in rows]

    # -- writing ----------------------------------------------------------------

    def _record(self, actum: Actum, key: str | None, owner_id: str | None) -> Actum:
        connection = self._connection()
        if connection.vendor == "postgresql":
            return self._record_postgres(connection, actum, key, owner_id)
        return self._record_orm(connection, actum, key, owner_id)

    @staticmethod
    def _record_postgres(
        connection: BaseDatabaseWrapper, actum: Actum, key: str | None, owner_id: str | None
    ) -> Actum:
        sql = _PG_RECORDS[key is not None, owner_id is not None]
        params = [
            actum.id,
            actum.kind.value,
            actum.actor_kind.value,
            actum.actor,
            actum.content,
            key,
            actum.chronicum_id,
        ]
        if owner_id is not None:
            params.append(owner_id)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            row = cursor.fetchone()
            if row is not None:
                return dataclasses.replace(actum, at=_utc(row[0]))
            if key is not None:
                # Nothing inserted: the key was used before (it wins), or no chronicum.
                if owner_id is None:
                    cursor.execute(_BY_KEY, [actum.chronicum_id, key])
                else:
                    cursor.execute(_BY_KEY_OWNED, [actum.chronicum_id, key, owner_id])
                stored = cursor.fetchone()
                if stored is not None:
                    return _actum(actum.chronicum_id, stored)
        raise ChronicumNotFound(actum.chronicum_id)

    @staticmethod
    def _record_orm(
        connection: BaseDatabaseWrapper, actum: Actum, key: str | None, owner_id: str | None
    ) -> Actum:
        using = connection.alias
        chronica = models.Chronicum.objects.using(using).filter(pk=actum.chronicum_id)
        if owner_id is not None:
            chronica = chronica.filter(owner_id=owner_id)
        with transaction.atomic(using=using):
            # Write first: the transaction takes the write lock before it reads,
            # so concurrent SQLite writers wait instead of deadlocking.
            if not chronica.update(last_activity_at=F("last_activity_at")):
                raise ChronicumNotFound(actum.chronicum_id)
            if key is not None:
                with connection.cursor() as cursor:
                    cursor.execute(_BY_KEY, [actum.chronicum_id, key])
                    stored = cursor.fetchone()
                if stored is not None:
                    return _actum(actum.chronicum_id, stored)
            at = dt.datetime.now(dt.UTC)
            models.Actum.objects.using(using).create(
                id=actum.id,
                chronicum_id=actum.chronicum_id,
                kind=actum.kind.value,
                actor_kind=actum.actor_kind.value,
                actor=actum.actor,
                content=actum.content,
                at=at,
                idempotency_key=key,
            )
            chronica.update(last_activity_at=at)
        return dataclasses.replace(actum, at=at)
