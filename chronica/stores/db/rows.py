"""Chronica's values as the statements take them, and the rows they hand back as values."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Sequence
from typing import Any

from django.utils.dateparse import parse_datetime

from ...validation import RawJSON, compact_json, dumps_data, loads_data, raw_data
from ...values import STORED_ACTUM_SETTERS, ActorKind, Actum, ActumKind

__all__ = [
    "acta_newest_first",
    "acta_of",
    "actum",
    "actum_params",
    "batch_json",
    "member_keys",
    "utc",
]

_KINDS = {k.value: k for k in ActumKind}
_ACTOR_KINDS = {k.value: k for k in ActorKind}
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MICROS = dt.timedelta


def utc(value: Any) -> dt.datetime:
    """A time as a database hands it back, as an aware UTC datetime."""
    # PostgreSQL hands back aware datetimes (or epoch microseconds where we ask for
    # them); SQLite a string; MySQL a naive UTC datetime.
    if isinstance(value, int):
        return _EPOCH + dt.timedelta(0, 0, value)
    if isinstance(value, str):
        value = parse_datetime(value)
    if value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)  # type: ignore[no-any-return]
    return value.astimezone(dt.UTC)  # type: ignore[no-any-return]


def actum(chronicum_id: str, row: Sequence[Any]) -> Actum:
    """The actum of a row that selected ``dialect.columns()``."""
    return acta_of(chronicum_id, (row,))[0]


def acta_newest_first(chronicum_id: str, rows: Sequence[Sequence[Any]]) -> list[Actum]:
    """The acta of a window's rows, read newest first, in write order (oldest first)."""
    return acta_of(chronicum_id, reversed(rows))


def acta_of(chronicum_id: str, rows: Iterable[Sequence[Any]]) -> list[Actum]:
    """The acta of rows that selected ``dialect.columns()``, in the rows' order.

    ``stored_actum`` of each row, written out in one loop: a window builds dozens of
    acta a call, and the calls per actum were a fifth of a window's time on PostgreSQL
    (BENCHMARKS.md, issue 23)."""
    (
        set_chronicum_id,
        set_kind,
        set_actor_kind,
        set_actor,
        set_content,
        set_id,
        set_at,
        set_call_id,
        set_data,
        set_recorded_by,
    ) = STORED_ACTUM_SETTERS
    # The API's answers take the stored text as it is (validation.raw_data).
    raw = raw_data.get()
    kinds, actor_kinds, new, epoch, micros = _KINDS, _ACTOR_KINDS, object.__new__, _EPOCH, _MICROS
    acta = []
    for row in rows:
        at = row[5]
        data = row[7]
        if data is not None:
            data = RawJSON(compact_json(data)) if raw else loads_data(data)
        actum = new(Actum)
        set_chronicum_id(actum, chronicum_id)
        set_kind(actum, kinds[row[1]])
        set_actor_kind(actum, actor_kinds[row[2]])
        set_actor(actum, row[3])
        set_content(actum, row[4])
        set_id(actum, row[0])
        set_at(actum, epoch + micros(0, 0, at) if type(at) is int else utc(at))
        set_call_id(actum, row[6])
        set_data(actum, data)
        set_recorded_by(actum, row[8])
        acta.append(actum)
    return acta


def member_keys(key: str | None, count: int) -> list[str | None]:
    """The idempotency key column of each actum of a batch: the key on the first,
    ``<key>\\n<position>`` on the others (a key never holds a newline)."""
    keys: list[str | None] = [None] * count
    if key is not None:
        keys = [key, *(f"{key}\n{i}" for i in range(1, count))]
    return keys


_ACTUM_PARAMS = (
    "id",
    "kind",
    "actor_kind",
    "actor",
    "content",
    "call_id",
    "data",
    "tokens",
    "recorded_by",
)


def actum_params(actum: Actum, tokens: int | None) -> list[Any]:
    """One actum's columns as the PostgreSQL writes take them, in the order of
    ``_ACTUM_PARAMS`` (data as JSON text; ``recorded_by`` last, which migration 0004's
    functions do not take)."""
    return [
        actum.id,
        actum.kind.value,
        actum.actor_kind.value,
        actum.actor,
        actum.content,
        actum.call_id,
        None if actum.data is None else dumps_data(actum.data),
        tokens,
        actum.recorded_by,
    ]


def batch_json(
    acta: Sequence[Actum], keys: Sequence[str | None] | None, tokens: Sequence[int | None]
) -> str:
    """The batch as the JSON array the PostgreSQL statement reads, one object an actum
    (with each one's idempotency key when ``keys`` are given)."""
    objects = [
        dict(zip(_ACTUM_PARAMS, actum_params(a, count), strict=True))
        for a, count in zip(acta, tokens, strict=True)
    ]
    if keys is not None:
        for obj, key in zip(objects, keys, strict=True):
            obj["key"] = key
    return json.dumps(
        objects,
        ensure_ascii=False,
        separators=(",", ":"),
    )
