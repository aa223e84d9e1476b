"""``DjangoStore.compact`` and ``DjangoStore.fork``, in any dialect: the statements of
``compaction_sql``, each write one short transaction of the caller's own."""

from __future__ import annotations

import dataclasses
import datetime as dt
import secrets
from collections.abc import Callable, Sequence
from typing import Any

from django.db import IntegrityError, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from ...errors import ChronicumExists, InvalidQuery
from ...interfaces import WindowPage
from ...validation.jsondata import RawJSON, dumps_data
from ...values import FILTERS, ActaQuery, Actum, Chronicum, Recorded
from ...windows import cut_page
from .base import BaseDialect
from .rows import acta_of, batch_json, stamped, utc
from .sql import ACTUM_COLUMNS, filters

__all__ = ["ReadWhole", "compact", "fork", "walkable", "window"]

_NO_END = 2**63 - 1
_TICK = dt.timedelta(microseconds=1)
_COMPACTS = ACTUM_COLUMNS.index("compacts")


def compact(
    dialect: BaseDialect,
    connection: BaseDatabaseWrapper,
    owner_id: str | None,
    chronicum_id: str,
    acta: Sequence[Actum],
    through: str,
    key: str | None,
    tokens: Sequence[int | None],
    credential: str | None,
) -> Recorded | None:
    """The compaction, under the chronicum's lock (taken first, checking the owner and
    the credential): a replay of ``key``, or ``through`` checked, the moment chosen after
    the newest compaction's, the batch inserted and the chronicum bumped."""
    params: dict[str, Any] = {"chronicum_id": chronicum_id, "through": through}

    def write() -> Recorded | None:
        with transaction.atomic(using=connection.alias), dialect.cursor(connection) as cursor:
            if not dialect.lock_chronicum(cursor, owner_id, chronicum_id, credential):
                dialect.check_credential(connection, cursor, credential)
                return None
            if key is not None and (replay := dialect.replay(cursor, owner_id, chronicum_id, key)):
                return Recorded(replay, replayed=True)
            params["now"] = dialect.time(connection, dt.datetime.now(dt.UTC))
            cursor.execute(dialect.statement("COMPACT_START"), params)
            found, newest, now = cursor.fetchone()
            if not found:
                raise InvalidQuery(f"through={through!r} is not an actum of this chronicum")
            moment = utc(now)
            if newest is not None and moment <= utc(newest):
                moment = utc(newest) + _TICK
            at = dialect.time(connection, moment)
            # The vendors insert the batch in one statement; the plain dialect, an actum
            # at a time.
            name = getattr(dialect, "compaction_insert", "COMPACT_INSERT")
            insert = dialect.statement(name)
            if name == "COMPACT_INSERT":
                cursor.executemany(
                    insert, list(_rows(acta, tokens, key, chronicum_id, at, through))
                )
            else:
                cursor.execute(insert, dict(params, at=at, acta=batch_json(acta, tokens, key)))
            cursor.execute(dialect.statement("BUMP"), {"at": at, "chronicum_id": chronicum_id})
        stored = stamped(acta, moment)
        return Recorded([dataclasses.replace(actum, compacts=through) for actum in stored])

    return dialect.retry_when_locked(connection, write)


def _rows(
    acta: Sequence[Actum],
    tokens: Sequence[int | None],
    key: str | None,
    chronicum_id: str,
    at: Any,
    through: str,
) -> Any:
    for i, (a, count) in enumerate(zip(acta, tokens, strict=True)):
        yield {
            "id": a.id,
            "chronicum_id": chronicum_id,
            "kind": a.kind.value,
            "actor_kind": a.actor_kind.value,
            "actor": a.actor,
            "content": a.content,
            "at": at,
            "call_id": a.call_id,
            "data": None if a.data is None else dumps_data(a.data),
            "tokens": count,
            "key": None if key is None else (key if i == 0 else f"{key}\n{i}"),
            "recorded_by": a.recorded_by,
            "through": through,
        }


def fork(
    dialect: BaseDialect,
    connection: BaseDatabaseWrapper,
    owner_id: str,
    chronicum_id: str,
    through: str | None,
    new: Chronicum,
) -> Chronicum | None:
    """The fork in two statements, one a table (``FORK_CHRONICUM``, ``FORK_ACTA``), in one
    transaction that starts with the write of the new chronicum."""
    params = {
        "chronicum_id": chronicum_id,
        "owner_id": owner_id,
        "new_id": new.id,
        "through": through or "",
        "started_at": dialect.time(connection, new.started_at),
        "last_activity_at": dialect.time(connection, new.last_activity_at),
        "salt": secrets.token_hex(16),
        "no_end": _NO_END,
    }

    def write() -> Chronicum | None:
        with transaction.atomic(using=connection.alias), dialect.cursor(connection) as cursor:
            try:
                with transaction.atomic(using=connection.alias):
                    cursor.execute(dialect.statement("FORK_CHRONICUM"), params)
            except IntegrityError:
                raise ChronicumExists(new.id) from None
            if cursor.rowcount == 0:
                cursor.execute(dialect.statement("FORK_SOURCE"), params)
                if cursor.fetchone() is None:
                    return None
                raise InvalidQuery(f"through={through!r} is not an actum of this chronicum")
            cursor.execute(dialect.statement("FORK_ACTA"), params)
        return new

    return dialect.retry_when_locked(connection, write)


def walkable(query: ActaQuery) -> bool:
    """Whether the compacted window of ``query`` is the plain window wherever that one
    holds no actum of a compaction: no filter (a filtered walk could pass a compaction
    without a row of it), no budget and no ``before``, and a ``last_n``. The newest acta,
    none of a compaction, are newer than the newest compaction, so after its through
    and of no compaction: the view's newest; and where the walk ends before the limit,
    the chronicum has no compaction at all."""
    plain = not any(getattr(query, declared.field) for declared in FILTERS)
    return (
        plain
        and query.max_tokens is None
        and query.max_bytes is None
        and query.before is None
        and 0 < query.last_n < _NO_END
    )


class ReadWhole(Exception):
    """The walk cut at ``last_n`` reached the compaction's acta: acta recorded while it
    was made, older than it, may still come before them in the view. Read it whole."""


def window(
    dialect: BaseDialect,
    owner_id: str | None,
    chronicum_id: str,
    query: ActaQuery,
    whole: bool = False,
) -> tuple[tuple[str, dict[str, Any]], Callable[[list[tuple[Any, ...]]], WindowPage | None]]:
    """The statement of a compacted window (``COMPACTED_WINDOW``) and what turns its rows
    into the page. With ``last_n`` alone the walk stops at the limit (``ReadWhole`` when
    that cannot tell the window); with a budget or ``before`` (or ``whole``) the whole
    view is read and cut here."""
    where, params = filters(query)
    params.update(chronicum_id=chronicum_id, owner_id=owner_id)
    simple = query.max_tokens is None and query.max_bytes is None and query.before is None
    last_n = query.last_n if 0 < query.last_n < _NO_END else 0
    limit = ""
    if simple and last_n and not whole:
        limit, params["last_n"] = " LIMIT CAST(%(last_n)s AS BIGINT) + 1", last_n
    text = dialect.statement("COMPACTED_WINDOW", owner_id is not None).format(
        filters=where, limit=limit
    )
    width = len(ACTUM_COLUMNS)

    def page(rows: list[tuple[Any, ...]]) -> WindowPage | None:
        if not rows[0][0]:
            return None
        found = [row[1:] for row in rows if row[-1] is not None]
        if limit and len(found) > last_n and any(r[_COMPACTS] is not None for r in found):
            raise ReadWhole
        # Newest first in the view: the acta of no compaction, then the compaction's.
        kept = [r for r in found if r[_COMPACTS] is None]
        kept += [r for r in found if r[_COMPACTS] is not None]
        if simple:
            more = bool(last_n) and len(kept) > last_n
            kept = kept[:last_n] if more else kept
            kept.reverse()
            return acta_of(chronicum_id, [r[:width] for r in kept], raw=query.raw_data), more
        kept.reverse()
        acta = acta_of(chronicum_id, [r[:width] for r in kept])
        counts = {a.id: int(r[width + 1]) for a, r in zip(acta, kept, strict=True)}
        plain = dataclasses.replace(query, compacted=False, raw_data=False)
        cut, more = cut_page(acta, plain, lambda actum: counts[actum.id])
        if query.raw_data:
            cut = [
                a if a.data is None else dataclasses.replace(a, data=RawJSON(dumps_data(a.data)))
                for a in cut
            ]
        return cut, more

    return (text, params), page
