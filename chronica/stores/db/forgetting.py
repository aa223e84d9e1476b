"""Forgetting on a Django database: a redaction, the erasure of an owner, a retention
rule. Each works in short transactions (a batch at a time) so that no lock is held
long, and beside concurrent writers.

**Erasure.** The record in ``chronica_erasures`` is written (and committed) first; it
names the owner in ``erasing_owner`` while the work is under way, and every write that
would create a chronicum checks it in its own statement (``sql.CREDENTIAL_OK``), so a
writer cannot bring the owner back while the batches run. The batches delete the
owner's chronica a few at a time, each batch with its acta. The last transaction takes
the write lock of the chronica table (PostgreSQL: SHARE ROW EXCLUSIVE, which waits for
the writes under way and holds back new ones for as long as it runs; SQLite: the
database's write lock, taken by its first statement), removes whatever landed since,
the owner's shared state and credentials, lets the integrations erase (``owner_erased``),
and completes the record, emptying ``erasing_owner``. A write either committed before
that lock, and is erased, or was refused, or comes after the erasure.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from django.db import IntegrityError, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from ... import models
from ...values import Actum, Erasure
from .dialects import dialect_of
from .rows import acta_of

__all__ = ["BATCH", "EXPIRE_BATCH", "erase", "expire", "owner_hash", "redactions"]

BATCH = 50
"""Chronica an erasure deletes in one transaction (each with its acta)."""

EXPIRE_BATCH = 500
"""Acta (a range of seq) a retention redaction looks at in one transaction; chronica a
retention delete takes in one is ``BATCH``."""

ACTA = models.Actum._meta.db_table
CHRONICA = models.Chronicum._meta.db_table
STATES = models.SharedState._meta.db_table
CREDENTIALS = models.AgentCredential._meta.db_table
ERASURES = models.ErasureRecord._meta.db_table


def owner_hash(owner_id: str) -> str:
    """The SHA-256 (hex) of an owner ID: what an erasure's record keeps of it."""
    return hashlib.sha256(owner_id.encode()).hexdigest()


def _q(connection: BaseDatabaseWrapper, name: str) -> str:
    return connection.ops.quote_name(name)


def _marks(values: list[Any]) -> str:
    return ", ".join(["%s"] * len(values))


def _in_transaction(connection: BaseDatabaseWrapper, work: Callable[[], Any]) -> Any:
    def atomic() -> Any:
        with transaction.atomic(using=connection.alias):
            return work()

    return dialect_of(connection).retry_when_locked(connection, atomic)


def redactions(
    connection: BaseDatabaseWrapper,
    owner_id: str,
    chronicum_id: str,
    since: dt.datetime,
    position: int,
) -> list[Actum]:
    dialect = dialect_of(connection)
    columns = dialect.columns()
    text = (
        f"SELECT {columns} FROM {_q(connection, ACTA)} WHERE chronicum_id = %s"
        f" AND redacted_at IS NOT NULL AND redacted_at >= %s AND seq <= %s"
        f" AND EXISTS (SELECT 1 FROM {_q(connection, CHRONICA)} WHERE id = %s AND owner_id = %s)"
        " ORDER BY seq"
    )
    with connection.cursor() as cursor:
        cursor.execute(
            text,
            [chronicum_id, dialect.time(connection, since), position, chronicum_id, owner_id],
        )
        return acta_of(chronicum_id, cursor.fetchall())


# -- erasure -----------------------------------------------------------------------


def _delete_chronica(
    connection: BaseDatabaseWrapper, cursor: Any, owner_id: str, limit: int | None
) -> tuple[int, int]:
    """Delete up to ``limit`` (``None``: all) of the owner's chronica with their acta,
    each row locked first by a write (SQLite: the database's write lock); the acta and
    chronica removed."""
    chronica, acta = _q(connection, CHRONICA), _q(connection, ACTA)
    cut = "" if limit is None else f" ORDER BY id LIMIT {int(limit)}"
    cursor.execute(
        f"UPDATE {chronica} SET owner_id = owner_id WHERE id IN"
        f" (SELECT id FROM {chronica} WHERE owner_id = %s{cut}) AND owner_id = %s RETURNING id",
        [owner_id, owner_id],
    )
    ids = [row[0] for row in cursor.fetchall()]
    if not ids:
        return 0, 0
    cursor.execute(f"DELETE FROM {acta} WHERE chronicum_id IN ({_marks(ids)})", ids)
    removed_acta = int(cursor.rowcount)
    cursor.execute(f"DELETE FROM {chronica} WHERE id IN ({_marks(ids)})", ids)
    removed = int(cursor.rowcount)
    dialect = dialect_of(connection)
    for chronicum_id in ids:
        dialect.deleted(cursor, chronicum_id)  # its followers learn it is gone
    return removed, removed_acta


def _count(connection: BaseDatabaseWrapper, owner_id: str) -> dict[str, int]:
    chronica, acta = _q(connection, CHRONICA), _q(connection, ACTA)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT (SELECT COUNT(*) FROM {chronica} WHERE owner_id = %s),"
            f" (SELECT COUNT(*) FROM {acta} WHERE chronicum_id IN"
            f" (SELECT id FROM {chronica} WHERE owner_id = %s)),"
            f" (SELECT COUNT(*) FROM {_q(connection, STATES)} WHERE owner_id = %s),"
            f" (SELECT COUNT(*) FROM {_q(connection, CREDENTIALS)} WHERE owner_id = %s)",
            [owner_id] * 4,
        )
        row = cursor.fetchone()
    return {CHRONICA: row[0], ACTA: row[1], STATES: row[2], CREDENTIALS: row[3]}


def _begin(connection: BaseDatabaseWrapper, owner_id: str, reason: str) -> int:
    """The record of an erasure of ``owner_id`` under way (an interrupted one's, taken
    up again), or a new one, committed."""
    records = models.ErasureRecord.objects.using(connection.alias)
    for _attempt in range(3):
        found = records.filter(erasing_owner=owner_id).values_list("pk", flat=True).first()
        if found is not None:
            return int(found)
        try:
            with transaction.atomic(using=connection.alias):
                record = records.create(
                    owner_hash=owner_hash(owner_id),
                    erasing_owner=owner_id,
                    reason=reason,
                    started_at=dt.datetime.now(dt.UTC),
                    counts={},
                )
            return int(record.pk)
        except IntegrityError:
            continue  # another erasure of the owner began: join it
    raise RuntimeError("could not begin the erasure")  # pragma: no cover


def erase(
    connection: BaseDatabaseWrapper,
    owner_id: str,
    *,
    reason: str,
    dry_run: bool,
    before_commit: Callable[[bool], Mapping[str, int]] | None,
    batch: int = BATCH,
) -> Erasure:
    if dry_run:
        counts: Counter[str] = Counter(_count(connection, owner_id))
        if before_commit is not None:
            counts.update(before_commit(True))
        return Erasure(owner_hash(owner_id), dt.datetime.now(dt.UTC), reason, dict(counts))
    if connection.in_atomic_block:
        raise RuntimeError("erase_owner runs its own transactions: call it outside of one")
    pk = _begin(connection, owner_id, reason)
    records = models.ErasureRecord.objects.using(connection.alias).filter(pk=pk)
    stored = records.values_list("counts", "reason").get()
    counts = Counter({CHRONICA: 0, ACTA: 0, STATES: 0, CREDENTIALS: 0})
    counts.update(stored[0] or {})
    reason = stored[1] or reason

    def one_batch() -> tuple[int, int]:
        with connection.cursor() as cursor:
            removed, removed_acta = _delete_chronica(connection, cursor, owner_id, batch)
        if removed:
            # What an interrupted erasure had done, for the one that takes it up.
            done = counts + Counter({CHRONICA: removed, ACTA: removed_acta})
            records.update(counts=dict(done))
        return removed, removed_acta

    while True:
        removed, removed_acta = _in_transaction(connection, one_batch)
        counts.update({CHRONICA: removed, ACTA: removed_acta})
        if removed < batch:
            break

    def last() -> tuple[dt.datetime, Counter[str]]:
        done = Counter(counts)
        with connection.cursor() as cursor:
            # The table's write lock: the writes under way commit first (and are
            # erased here), new ones wait until this commits.
            lock = getattr(dialect_of(connection), "erasure_lock", None)
            if lock:
                cursor.execute(lock.format(table=_q(connection, CHRONICA)))
            removed, removed_acta = _delete_chronica(connection, cursor, owner_id, None)
            done.update({CHRONICA: removed, ACTA: removed_acta})
            cursor.execute(f"DELETE FROM {_q(connection, STATES)} WHERE owner_id = %s", [owner_id])
            done[STATES] += int(cursor.rowcount)
            cursor.execute(
                f"DELETE FROM {_q(connection, CREDENTIALS)} WHERE owner_id = %s", [owner_id]
            )
            done[CREDENTIALS] += int(cursor.rowcount)
        if before_commit is not None:
            done.update(before_commit(False))
        at = dt.datetime.now(dt.UTC)
        records.update(completed_at=at, erasing_owner=None, counts=dict(done))
        return at, done

    at, done = _in_transaction(connection, last)
    return Erasure(owner_hash(owner_id), at, reason, dict(done))


# -- retention ---------------------------------------------------------------------


def expire(
    connection: BaseDatabaseWrapper,
    action: str,
    cutoff: dt.datetime,
    kinds: frozenset[str],
    *,
    reason: str,
    dry_run: bool,
    batch: int | None = None,
) -> dict[str, int]:
    if action == "redact":
        return _expire_redact(connection, cutoff, kinds, reason, dry_run, batch or EXPIRE_BATCH)
    return _expire_delete(connection, cutoff, dry_run, batch or BATCH)


def _expire_redact(
    connection: BaseDatabaseWrapper,
    cutoff: dt.datetime,
    kinds: frozenset[str],
    reason: str,
    dry_run: bool,
    batch: int,
) -> dict[str, int]:
    dialect = dialect_of(connection)
    acta = _q(connection, ACTA)
    when = dialect.time(connection, cutoff)
    of_kinds = f" AND kind IN ({_marks(sorted(kinds))})" if kinds else ""
    params: list[Any] = [when, *sorted(kinds)]
    where = f"at < %s AND redacted_at IS NULL{of_kinds}"
    if dry_run:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT COUNT(*) FROM {acta} WHERE {where}", params)
            return {ACTA: int(cursor.fetchone()[0])}
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT MIN(seq), MAX(seq) FROM {acta}")
        low, high = cursor.fetchone()
    if low is None:
        return {ACTA: 0}
    done = 0
    now = dialect.time(connection, dt.datetime.now(dt.UTC))
    # A range of seq at a time: each batch an index range of the primary key, its
    # row locks held only for that batch.
    start = int(low) - 1
    while start < int(high):
        end = start + batch

        def one(start: int = start, end: int = end) -> int:
            with connection.cursor() as cursor:
                cursor.execute(
                    f"UPDATE {acta} SET content = '', data = NULL, tokens = 0,"
                    " redacted_at = %s, redacted_reason = %s"
                    f" WHERE seq > %s AND seq <= %s AND {where}",
                    [now, reason, start, end, *params],
                )
                return int(cursor.rowcount)

        done += _in_transaction(connection, one)
        start = end
    return {ACTA: done}


def _expire_delete(
    connection: BaseDatabaseWrapper, cutoff: dt.datetime, dry_run: bool, batch: int
) -> dict[str, int]:
    dialect = dialect_of(connection)
    chronica, acta = _q(connection, CHRONICA), _q(connection, ACTA)
    when = dialect.time(connection, cutoff)
    if dry_run:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT COUNT(*), (SELECT COUNT(*) FROM {acta} WHERE chronicum_id IN"
                f" (SELECT id FROM {chronica} WHERE last_activity_at < %s))"
                f" FROM {chronica} WHERE last_activity_at < %s",
                [when, when],
            )
            found = cursor.fetchone()
        return {CHRONICA: int(found[0]), ACTA: int(found[1])}
    counts: Counter[str] = Counter({CHRONICA: 0, ACTA: 0})

    def one() -> int:
        with connection.cursor() as cursor:
            # Locked by a write, the cutoff checked again on the locked row: a
            # chronicum written to meanwhile is kept.
            cursor.execute(
                f"UPDATE {chronica} SET owner_id = owner_id WHERE id IN"
                f" (SELECT id FROM {chronica} WHERE last_activity_at < %s"
                f" ORDER BY last_activity_at, id LIMIT {int(batch)})"
                " AND last_activity_at < %s RETURNING id",
                [when, when],
            )
            ids = [row[0] for row in cursor.fetchall()]
            if not ids:
                return 0
            cursor.execute(f"DELETE FROM {acta} WHERE chronicum_id IN ({_marks(ids)})", ids)
            counts[ACTA] += int(cursor.rowcount)
            cursor.execute(f"DELETE FROM {chronica} WHERE id IN ({_marks(ids)})", ids)
            counts[CHRONICA] += int(cursor.rowcount)
            for chronicum_id in ids:
                dialect.deleted(cursor, chronicum_id)
            return len(ids)

    while _in_transaction(connection, one) >= batch:
        pass
    return dict(counts)
