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
from .dialects import DIALECTS, PLAIN, dialect_of
from .rows import acta_of
from .sql import ACTUM_COLUMNS

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

_TEMPLATES = {
    # Up to a number of the owner's chronica, each locked by a write (SQLite: the
    # database's write lock, taken before any read).
    "LOCK_OWNERS": "UPDATE {chronica} SET owner_id = owner_id WHERE id IN (SELECT id"
    " FROM {chronica} WHERE owner_id = %s ORDER BY id LIMIT %s) AND owner_id = %s RETURNING id",
    "DELETE_ACTA": "DELETE FROM {acta} WHERE chronicum_id {list}",
    "DELETE_CHRONICA": "DELETE FROM {chronica} WHERE id {list}",
    "DELETE_STATES": "DELETE FROM {states} WHERE owner_id = %s",
    "DELETE_CREDENTIALS": "DELETE FROM {credentials} WHERE owner_id = %s",
    # PostgreSQL: waits for the writes under way, holds back new ones while it runs.
    "LOCK_TABLE": "LOCK TABLE {chronica} IN SHARE ROW EXCLUSIVE MODE",
    "COUNT_OWNER": "SELECT (SELECT COUNT(*) FROM {chronica} WHERE owner_id = %s),"
    " (SELECT COUNT(*) FROM {acta} WHERE chronicum_id IN"
    " (SELECT id FROM {chronica} WHERE owner_id = %s)),"
    " (SELECT COUNT(*) FROM {states} WHERE owner_id = %s),"
    " (SELECT COUNT(*) FROM {credentials} WHERE owner_id = %s)",
    "REDACTIONS": "SELECT {columns} FROM {acta} WHERE chronicum_id = %s"
    " AND redacted_at IS NOT NULL AND redacted_at >= %s AND seq <= %s"
    " AND EXISTS (SELECT 1 FROM {chronica} WHERE id = %s AND owner_id = %s) ORDER BY seq",
    "SEQ_RANGE": "SELECT MIN(seq), MAX(seq) FROM {acta}",
    "EXPIRE_REDACT": "UPDATE {acta} SET content = '', data = NULL, tokens = 0,"
    " redacted_at = %s, redacted_reason = %s"
    " WHERE seq > %s AND seq <= %s AND at < %s AND redacted_at IS NULL",
    "COUNT_REDACT": "SELECT COUNT(*) FROM {acta} WHERE at < %s AND redacted_at IS NULL",
    "LOCK_INACTIVE": "UPDATE {chronica} SET owner_id = owner_id WHERE id IN (SELECT id"
    " FROM {chronica} WHERE last_activity_at < %s ORDER BY last_activity_at, id LIMIT %s)"
    " AND last_activity_at < %s RETURNING id",
    "COUNT_INACTIVE": "SELECT COUNT(*), (SELECT COUNT(*) FROM {acta} WHERE chronicum_id IN"
    " (SELECT id FROM {chronica} WHERE last_activity_at < %s))"
    " FROM {chronica} WHERE last_activity_at < %s",
}
_TEMPLATES["EXPIRE_REDACT_KINDS"] = _TEMPLATES["EXPIRE_REDACT"] + " AND kind {list}"
_TEMPLATES["COUNT_REDACT_KINDS"] = _TEMPLATES["COUNT_REDACT"] + " AND kind {list}"

# A list of IDs or kinds travels as one parameter (``Features.in_list``): one statement
# text whatever its length.
STATEMENTS = {
    features: {
        name: template.format(
            acta=ACTA,
            chronica=CHRONICA,
            states=STATES,
            credentials=CREDENTIALS,
            columns=", ".join(ACTUM_COLUMNS),
            list=features.in_list,
        )
        for name, template in _TEMPLATES.items()
    }
    for features in {dialect.features for dialect in (*DIALECTS.values(), PLAIN)}
}
"""The statements, by the features of each dialect, formatted once at import."""

_ALL = 2**62
"""A LIMIT that is no limit."""


def owner_hash(owner_id: str) -> str:
    """The SHA-256 (hex) of an owner ID: what an erasure's record keeps of it."""
    return hashlib.sha256(owner_id.encode()).hexdigest()


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
    when = dialect.time(connection, since)
    with dialect.cursor(connection) as cursor:
        cursor.execute(
            STATEMENTS[dialect.features]["REDACTIONS"],
            [chronicum_id, when, position, chronicum_id, owner_id],
        )
        return acta_of(chronicum_id, cursor.fetchall())


# -- erasure -----------------------------------------------------------------------


def _delete_chronica(
    connection: BaseDatabaseWrapper, cursor: Any, owner_id: str, limit: int | None
) -> tuple[int, int]:
    """Delete up to ``limit`` (``None``: all) of the owner's chronica with their acta,
    each row locked first by a write (SQLite: the database's write lock); the acta and
    chronica removed."""
    dialect = dialect_of(connection)
    statements = STATEMENTS[dialect.features]
    cursor.execute(
        statements["LOCK_OWNERS"], [owner_id, _ALL if limit is None else limit, owner_id]
    )
    ids = [row[0] for row in cursor.fetchall()]
    if not ids:
        return 0, 0
    listed = dialect.features.listed(ids)
    cursor.execute(statements["DELETE_ACTA"], [listed])
    removed_acta = int(cursor.rowcount)
    cursor.execute(statements["DELETE_CHRONICA"], [listed])
    removed = int(cursor.rowcount)
    for chronicum_id in ids:
        dialect.deleted(cursor, chronicum_id)  # its followers learn it is gone
    return removed, removed_acta


def _count(connection: BaseDatabaseWrapper, owner_id: str) -> dict[str, int]:
    dialect = dialect_of(connection)
    with dialect.cursor(connection) as cursor:
        cursor.execute(STATEMENTS[dialect.features]["COUNT_OWNER"], [owner_id] * 4)
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

        def create() -> int:
            record = records.create(
                owner_hash=owner_hash(owner_id),
                erasing_owner=owner_id,
                reason=reason,
                started_at=dt.datetime.now(dt.UTC),
                counts={},
            )
            return int(record.pk)

        try:
            # (SQLite: writers busy beside it can keep the write lock past the busy
            # timeout; the record is a transaction of its own, tried again)
            return int(_in_transaction(connection, create))
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
        with dialect_of(connection).cursor(connection) as cursor:
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
        dialect = dialect_of(connection)
        statements = STATEMENTS[dialect.features]
        with dialect.cursor(connection) as cursor:
            # The table's write lock: the writes under way commit first (and are
            # erased here), new ones wait until this commits.
            if getattr(dialect, "erasure_lock", None):
                cursor.execute(statements["LOCK_TABLE"])
            removed, removed_acta = _delete_chronica(connection, cursor, owner_id, None)
            done.update({CHRONICA: removed, ACTA: removed_acta})
            cursor.execute(statements["DELETE_STATES"], [owner_id])
            done[STATES] += int(cursor.rowcount)
            cursor.execute(statements["DELETE_CREDENTIALS"], [owner_id])
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
    statements = STATEMENTS[dialect.features]
    when = dialect.time(connection, cutoff)
    of_kinds = [dialect.features.listed(sorted(kinds))] if kinds else []
    if dry_run:
        with dialect.cursor(connection) as cursor:
            count = "COUNT_REDACT_KINDS" if kinds else "COUNT_REDACT"
            cursor.execute(statements[count], [when, *of_kinds])
            return {ACTA: int(cursor.fetchone()[0])}
    with dialect.cursor(connection) as cursor:
        cursor.execute(statements["SEQ_RANGE"])
        low, high = cursor.fetchone()
    if low is None:
        return {ACTA: 0}
    done = 0
    now = dialect.time(connection, dt.datetime.now(dt.UTC))
    redact = "EXPIRE_REDACT_KINDS" if kinds else "EXPIRE_REDACT"
    # A range of seq at a time: each batch an index range of the primary key, its
    # row locks held only for that batch.
    start = int(low) - 1
    while start < int(high):
        end = start + batch

        def one(start: int = start, end: int = end) -> int:
            with dialect.cursor(connection) as cursor:
                cursor.execute(statements[redact], [now, reason, start, end, when, *of_kinds])
                return int(cursor.rowcount)

        done += _in_transaction(connection, one)
        start = end
    return {ACTA: done}


def _expire_delete(
    connection: BaseDatabaseWrapper, cutoff: dt.datetime, dry_run: bool, batch: int
) -> dict[str, int]:
    dialect = dialect_of(connection)
    statements = STATEMENTS[dialect.features]
    when = dialect.time(connection, cutoff)
    if dry_run:
        with dialect.cursor(connection) as cursor:
            cursor.execute(statements["COUNT_INACTIVE"], [when, when])
            found = cursor.fetchone()
        return {CHRONICA: int(found[0]), ACTA: int(found[1])}
    counts: Counter[str] = Counter({CHRONICA: 0, ACTA: 0})

    def one() -> tuple[int, int, int]:
        with dialect.cursor(connection) as cursor:
            # Locked by a write, the cutoff checked again on the locked row: a
            # chronicum written to meanwhile is kept.
            cursor.execute(statements["LOCK_INACTIVE"], [when, batch, when])
            ids = [row[0] for row in cursor.fetchall()]
            if not ids:
                return 0, 0, 0
            listed = dialect.features.listed(ids)
            cursor.execute(statements["DELETE_ACTA"], [listed])
            removed_acta = int(cursor.rowcount)
            cursor.execute(statements["DELETE_CHRONICA"], [listed])
            removed = int(cursor.rowcount)
            for chronicum_id in ids:
                dialect.deleted(cursor, chronicum_id)
            return len(ids), removed, removed_acta

    while True:
        locked, removed, removed_acta = _in_transaction(connection, one)
        counts.update({CHRONICA: removed, ACTA: removed_acta})
        if locked < batch:
            break
    return dict(counts)
