"""The rows the statements hand back, as chronica's values."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Any

from django.utils.dateparse import parse_datetime

from ...validation.jsondata import RawJSON, loads_data
from ...values import ActorKind, Actum, ActumKind

__all__ = ["acta_of", "utc"]


def utc(value: Any) -> dt.datetime:
    """A time as a database hands it back, as an aware UTC datetime: PostgreSQL hands
    back aware datetimes, SQLite a string, MySQL a naive UTC datetime."""
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value)
        except ValueError:
            value = parse_datetime(value)
    if value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)  # type: ignore[no-any-return]
    return value.astimezone(dt.UTC)  # type: ignore[no-any-return]


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
        )
        for row in rows
    ]


def _data(stored: Any, raw: bool) -> Any:
    if stored is None:
        return None
    if not isinstance(stored, str):
        return stored  # a driver that decodes JSON itself
    return RawJSON.as_stored(stored) if raw else loads_data(stored)
