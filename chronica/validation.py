"""Checks of caller input, shared by every Chronicarius call (SPEC rules 1, 2, 7 and 8)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum
from typing import Any, TypeVar

from .errors import EmptyOwnerID, InvalidActum
from .values import ActaQuery, ActorKind, Actum, ActumKind

MAX_LENGTH = 255
"""The longest chronicum ID, actor, owner and idempotency key chronica accepts."""

_E = TypeVar("_E", bound=StrEnum)

# A lone surrogate (JSON can carry one as "\ud800") is a Python str no database
# driver can encode: refuse it here instead of half-writing and failing in the driver.
_SURROGATE = re.compile("[\ud800-\udfff]")


def check_owner(owner_id: object) -> None:
    """Rule 1: every call names an owner."""
    if owner_id is None or owner_id == "":
        raise EmptyOwnerID("owner_id is empty")


def storable(value: object) -> bool:
    """Whether ``value`` can be an ID any store keeps: a string, not too long, no NUL,
    no lone surrogate."""
    return (
        isinstance(value, str)
        and len(value) <= MAX_LENGTH
        and "\x00" not in value
        and not _SURROGATE.search(value)
    )


def _check_text(name: str, value: object, *, limit: int | None = MAX_LENGTH) -> None:
    if not isinstance(value, str):
        raise InvalidActum(f"{name} must be a string, not {type(value).__name__}")
    if "\x00" in value:
        raise InvalidActum(f"{name} contains a NUL character")
    if _SURROGATE.search(value):
        raise InvalidActum(f"{name} contains a lone surrogate, which is not valid Unicode text")
    if limit is not None and len(value) > limit:
        raise InvalidActum(f"{name} is longer than {limit} characters")


def check_actum(owner_id: str, actum: object, key: str | None) -> Actum:
    """Rule 2: refuse what no store could keep the same way, before the store is touched."""
    if not isinstance(actum, Actum):
        raise InvalidActum(f"actum must be a chronica.Actum, not {type(actum).__name__}")
    _check_text("owner_id", owner_id)
    _check_text("chronicum_id", actum.chronicum_id)
    if actum.chronicum_id == "":
        raise InvalidActum("chronicum_id is empty")
    _check_text("actor", actum.actor)
    if actum.actor == "":
        raise InvalidActum("actor is empty")
    if not isinstance(actum.kind, ActumKind):
        raise InvalidActum(f"unknown kind {actum.kind!r}")
    if not isinstance(actum.actor_kind, ActorKind):
        raise InvalidActum(f"unknown actor_kind {actum.actor_kind!r}")
    _check_text("content", actum.content, limit=None)
    if actum.content == "" and actum.kind in (ActumKind.MESSAGE, ActumKind.THOUGHT):
        raise InvalidActum(f"content is empty (a {actum.kind.value} needs content)")
    if key is not None:
        _check_text("idempotency_key", key)
    return actum


def normalize_key(key: object) -> str | None:
    """Rule 8: an empty key is no key."""
    if key is None or key == "":
        return None
    return key  # type: ignore[return-value]


def _members(enum: type[_E], name: str, values: Iterable[Any] | str | None) -> frozenset[_E]:
    if values is None:
        return frozenset()
    if isinstance(values, str):
        values = (values,)
    members = set()
    for value in values:
        try:
            members.add(enum(value))
        except ValueError:
            known = ", ".join(m.value for m in enum)
            raise ValueError(f"unknown {name} {value!r} (known: {known})") from None
    return frozenset(members)


def build_query(
    kinds: Iterable[ActumKind | str] | ActumKind | str | None,
    actor_kinds: Iterable[ActorKind | str] | ActorKind | str | None,
    last_n: int,
) -> ActaQuery:
    """Rule 7: unknown kinds are a ValueError; ``last_n <= 0`` means no limit."""
    if isinstance(last_n, bool) or not isinstance(last_n, int):
        raise ValueError(f"last_n must be an integer, not {type(last_n).__name__}")
    return ActaQuery(
        kinds=_members(ActumKind, "kind", kinds),
        actor_kinds=_members(ActorKind, "actor_kind", actor_kinds),
        last_n=max(last_n, 0),
    )
