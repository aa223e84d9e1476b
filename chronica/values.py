"""The frozen value types that cross every boundary of chronica (never ORM rows)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from enum import StrEnum

__all__ = ["ActaQuery", "ActorKind", "Actum", "ActumKind", "Chronicum"]


class ActumKind(StrEnum):
    """What an actum is."""

    MESSAGE = "message"
    THOUGHT = "thought"
    TOOL_REQUEST = "tool_request"
    TOOL_RESPONSE = "tool_response"


class ActorKind(StrEnum):
    """Who did it."""

    HUMAN = "human"
    AGENT = "agent"
    SYSTEM = "system"


@dataclasses.dataclass(frozen=True, slots=True)
class Chronicum:
    """One session: its ID, its owner, when it started and when its last actum was written."""

    id: str
    owner_id: str
    started_at: dt.datetime
    last_activity_at: dt.datetime


def _as_member(enum: type[StrEnum], value: object) -> object:
    # A known string value becomes the enum member; anything else is kept as
    # given so that Chronicarius can refuse it with InvalidActum.
    if isinstance(value, enum):
        return value
    if isinstance(value, str):
        try:
            return enum(value)
        except ValueError:
            return value
    return value


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Actum:
    """One thing that happened in a chronicum.

    ``kind`` and ``actor_kind`` accept the enum member or its string value; a
    known string value is turned into the member. ``id`` and ``at`` are set by
    chronica when the actum is recorded.
    """

    chronicum_id: str
    kind: ActumKind
    actor_kind: ActorKind
    actor: str
    content: str = ""
    id: str = ""
    at: dt.datetime | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", _as_member(ActumKind, self.kind))
        object.__setattr__(self, "actor_kind", _as_member(ActorKind, self.actor_kind))


@dataclasses.dataclass(frozen=True, slots=True)
class ActaQuery:
    """What a store's ``acta()`` receives: filters (empty = all) and a limit (``<= 0`` = none)."""

    kinds: frozenset[ActumKind] = frozenset()
    actor_kinds: frozenset[ActorKind] = frozenset()
    last_n: int = 0
