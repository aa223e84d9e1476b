"""The rows the statements hand back, as chronica's values."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, TypeVar

from django.utils.dateparse import parse_datetime

from ...validation.jsondata import RawJSON, dumps_data, loads_data
from ...values import ActorKind, Actum, ActumKind, Redaction

__all__ = ["Streamed", "acta_of", "batch_json", "one_row", "stamped", "utc"]

_R = TypeVar("_R")
_T = TypeVar("_T")
Row = Sequence[Any]


class Streamed(Generic[_R, _T]):
    """What turns a statement's rows into its answer, in two steps: ``take`` reads the
    rows it needs as they come (the store hands it the cursor to iterate, not
    ``fetchall()``'s list: SQLite steps its statement as rows are asked for, and the
    rows after the last one taken are never read), then ``answer`` makes the answer of
    what it took, once the cursor is closed. Called with a list (a statement that embeds
    this one reads every row), it does both."""

    __slots__ = ("answer", "take")

    def __init__(self, take: Callable[[Iterable[Row]], _R], answer: Callable[[_R], _T]) -> None:
        self.take = take
        self.answer = answer

    def __call__(self, rows: Iterable[Row]) -> _T:
        return self.answer(self.take(rows))


# (two times a row: a module's name is one lookup, ``dt.datetime.fromisoformat`` two)
_from_text, _UTC = dt.datetime.fromisoformat, dt.UTC


def utc(value: Any) -> dt.datetime:
    """A time as a database hands it back, as an aware UTC datetime: PostgreSQL hands
    back aware datetimes, SQLite a string, MySQL a naive UTC datetime."""
    if isinstance(value, str):
        try:
            value = _from_text(value)
        except ValueError:
            value = parse_datetime(value)
    zone = value.tzinfo
    if zone is None:
        return value.replace(tzinfo=_UTC)  # type: ignore[no-any-return]
    return value if zone is _UTC else value.astimezone(_UTC)  # type: ignore[no-any-return]


# The members by their stored values: a row's kinds become members at a dict's cost.
_KINDS: dict[str, ActumKind] = {member.value: member for member in ActumKind}
_ACTOR_KINDS: dict[str, ActorKind] = {member.value: member for member in ActorKind}


def acta_of(chronicum_id: str, rows: Iterable[Sequence[Any]], *, raw: bool = False) -> list[Actum]:
    """The acta of rows that selected ``sql.ACTUM_COLUMNS``, in the rows' order; with
    ``raw``, each one's ``data`` as its stored JSON text (``RawJSON``), not decoded."""
    kinds, actor_kinds = _KINDS, _ACTOR_KINDS
    return [
        Actum(
            chronicum_id=chronicum_id,
            id=row[0],
            kind=kinds.get(row[1], row[1]),
            actor_kind=actor_kinds.get(row[2], row[2]),
            actor=row[3],
            content=row[4],
            at=utc(row[5]),
            call_id=row[6],
            data=_data(row[7], raw),
            recorded_by=row[8],
            compacts=row[9] or "",
            redacted=None if row[10] is None else Redaction(utc(row[10]), row[11] or ""),
        )
        for row in rows
    ]


def _data(stored: Any, raw: bool) -> Any:
    if stored is None:
        return None
    if not isinstance(stored, str):
        return stored  # a driver that decodes JSON itself
    return RawJSON.as_stored(stored) if raw else loads_data(stored)


def batch_json(acta: Sequence[Actum], tokens: Sequence[int | None], key: str | None) -> str:
    """The batch as one JSON array, one object an actum with every column a write
    stores (``data`` as its JSON text; ``key``: the idempotency key of each, the key on
    the first and ``<key>\\n<position>`` on the others, a key never holding a newline):
    one parameter, one statement text, whatever the batch's size."""
    keys = (
        [None] * len(acta) if key is None else [key, *(f"{key}\n{i}" for i in range(1, len(acta)))]
    )
    return json.dumps(
        [
            {
                "id": a.id,
                "kind": a.kind.value,
                "actor_kind": a.actor_kind.value,
                "actor": a.actor,
                "content": a.content,
                "call_id": a.call_id,
                "data": None if a.data is None else dumps_data(a.data),
                "tokens": count,
                "recorded_by": a.recorded_by,
                "key": member_key,
            }
            for a, count, member_key in zip(acta, tokens, keys, strict=True)
        ],
        ensure_ascii=False,
        separators=(",", ":"),
    )


def one_row(actum: Actum, tokens: int | None) -> dict[str, Any]:
    """One actum's columns, for a statement that writes one actum without a key (the
    parameters ``batch_json`` puts in each object of its array)."""
    data = actum.data
    return {
        "id": actum.id,
        "kind": actum.kind.value,
        "actor_kind": actum.actor_kind.value,
        "actor": actum.actor,
        "content": actum.content,
        "call_id": actum.call_id,
        "data": None if data is None else dumps_data(data),
        "tokens": tokens,
        "recorded_by": actum.recorded_by,
    }


def stamped(acta: Sequence[Actum], at: Any) -> list[Actum]:
    """The acta as stored at ``at`` (a time as the database handed it back)."""
    moment = utc(at)
    return [dataclasses.replace(a, at=moment) for a in acta]
