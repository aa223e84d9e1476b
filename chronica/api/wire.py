"""The acta of the API's answers: what ``ActumSerializer`` writes, built directly.

A window of a hundred acta through DRF's fields takes milliseconds; these functions
write the same keys in the same order with the same values (``tests/api/
test_api_actum_wire.py`` holds them to ``ActumSerializer`` under several time zones).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from enum import Enum
from typing import Any

from rest_framework import ISO_8601, serializers
from rest_framework.settings import api_settings

from ..values import ActorKind, Actum, ActumKind
from .serializers import ActumSerializer

__all__ = ["ACTUM_FIELDS", "acta_wire", "actum_wire"]

#: The fields of an actum on the wire, in their order: the schema's (``ActumSerializer``)
#: and those :func:`actum_wire` writes are these, the same list.
ACTUM_FIELDS: tuple[str, ...] = tuple(ActumSerializer._declared_fields)

# How DRF writes ``at`` (its DATETIME_FORMAT, the current time zone), as ActumSerializer
# does; the other fields are written as they are (the enums: their values).
_AT = serializers.DateTimeField(read_only=True)


# The value of each of chronica's members, by the member: a dict's lookup costs a tenth
# of an enum's ``value`` (a property written in Python), twice an actum.
_VALUES: dict[Any, str] = {member: member.value for member in (*ActumKind, *ActorKind)}


def _enum(kind: Any) -> Any:
    try:
        return _VALUES[kind]
    except (KeyError, TypeError):  # (a value of a store of one's own)
        return kind.value if isinstance(kind, Enum) else kind


def _time_writer(zone: dt.tzinfo | None) -> Callable[[Any], Any]:
    """What ``DateTimeField(default_timezone=zone).to_representation`` writes (DRF's
    DATETIME_FORMAT); where that is ISO 8601 in a time zone, the same text in fewer
    steps for the aware UTC times a store hands back. Any other value goes through
    DRF's own field, made once a call and only if such a value comes."""
    output_format = api_settings.DATETIME_FORMAT
    fields: list[serializers.DateTimeField] = []

    def represent(value: Any) -> Any:
        if not fields:
            fields.append(serializers.DateTimeField(read_only=True, default_timezone=zone))
        return fields[0].to_representation(value)

    if zone is None or output_format is None or output_format.lower() != ISO_8601:
        return represent

    # (a UTC time written in UTC: no conversion)
    in_utc = zone is dt.UTC or getattr(zone, "key", None) == "UTC"

    def write(value: Any) -> Any:
        if value.__class__ is not dt.datetime or value.tzinfo is not dt.UTC:
            return represent(value)
        try:
            text = value.isoformat() if in_utc else value.astimezone(zone).isoformat()
        except OverflowError:
            return represent(value)  # (DRF's error)
        return text[:-6] + "Z" if text.endswith("+00:00") else text

    return write


def actum_wire(actum: Actum) -> dict[str, Any]:
    """``actum`` as the API answers it: what ``ActumSerializer(actum).data`` is, the
    same keys in the same order and the same values, built directly (DRF's field
    objects take twenty times as long)."""
    return _wire(actum, _time_writer(_AT.default_timezone()))


def _wire(actum: Actum, write: Callable[[Any], Any]) -> dict[str, Any]:
    # (the keys in ACTUM_FIELDS's order, which a test holds)
    at, redacted = actum.at, actum.redacted
    return {
        "id": actum.id,
        "chronicum_id": actum.chronicum_id,
        "kind": _enum(actum.kind),
        "actor_kind": _enum(actum.actor_kind),
        "actor": actum.actor,
        "content": actum.content,
        "at": None if at is None else write(at),
        "call_id": actum.call_id,
        "data": actum.data,
        "recorded_by": actum.recorded_by,
        "redacted": (
            None if redacted is None else {"at": write(redacted.at), "reason": redacted.reason}
        ),
        "compacts": actum.compacts,
    }


def acta_wire(acta: Iterable[Actum]) -> list[dict[str, Any]]:
    """:func:`actum_wire` of each actum, the current time zone read once for all."""
    write = _time_writer(_AT.default_timezone())
    return [_wire(actum, write) for actum in acta]
