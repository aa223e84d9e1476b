"""Chronica's values as the statements take them, and the rows they hand back as values."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Sequence
from typing import Any

from django.utils.dateparse import parse_datetime

from ...validation import RawJSON, dumps_data, loads_data, raw_data
from ...values import REFREEZES, ActorKind, Actum, ActumKind, UnfrozenActum, stored_actum

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


def utc(value: Any) -> dt.datetime:
    """A time as a database hands it back, as an aware UTC datetime."""
    # PostgreSQL hands back aware datetimes (or epoch microseconds where we ask for
    # them); SQLite a string; MySQL a naive UTC datetime.
    if isinstance(value, int):
        return _EPOCH + dt.timedelta(0, 0, value)
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value)  # (C, a fifth of parse_datetime's time)
        except ValueError:
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
    acta a call, and building them was half of the Python of a window on PostgreSQL
    (BENCHMARKS.md, issue 23): each is filled in as an ``UnfrozenActum`` and frozen,
    its time parsed from ISO 8601 text (``datetime.fromisoformat``) where the database
    sends one."""
    if not REFREEZES:
        return [
            stored_actum(
                chronicum_id,
                _KINDS[row[1]],
                _ACTOR_KINDS[row[2]],
                row[3],
                row[4],
                row[0],
                utc(row[5]),
                row[6],
                _data(row[7]),
                row[8],
            )
            for row in rows
        ]
    # The API's answers take the stored text as it is (validation.raw_data).
    raw = raw_data.get()
    kinds, actor_kinds, new, iso, time = _KINDS, _ACTOR_KINDS, object.__new__, _ISO, utc
    acta = []
    for row in rows:
        actum = new(UnfrozenActum)
        actum.chronicum_id = chronicum_id
        actum.kind = kinds[row[1]]
        actum.actor_kind = actor_kinds[row[2]]
        actum.actor = row[3]
        actum.content = row[4]
        actum.id = row[0]
        at = row[5]
        # PostgreSQL's reads send 'YYYY-MM-DDTHH:MM:SS.ffffff+00:00' (ISO_AT).
        actum.at = iso(at) if type(at) is str and at[-6:] == "+00:00" else time(at)
        actum.call_id = row[6]
        data = row[7]
        if data is not None:
            data = RawJSON.as_stored(data) if raw else loads_data(data)
        actum.data = data
        actum.recorded_by = row[8]
        actum.__class__ = Actum  # type: ignore[assignment]
        acta.append(actum)
    return acta  # type: ignore[return-value]


_ISO = dt.datetime.fromisoformat


def _data(text: str | None) -> Any:
    if text is None:
        return None
    # The API's answers take the stored text as it is (validation.raw_data).
    return RawJSON.as_stored(text) if raw_data.get() else loads_data(text)


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
