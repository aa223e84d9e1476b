"""The frozen value types that cross every boundary of chronica (never ORM rows)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any

__all__ = [
    "FILTERS",
    "ActaPage",
    "ActaQuery",
    "ActorKind",
    "Actum",
    "ActumKind",
    "ChronicaPage",
    "Chronicum",
    "Filter",
    "NamespaceListing",
    "Recorded",
    "RecordedActa",
    "StateChange",
    "StateScope",
    "StateView",
]

JSON = Any
"""A JSON value: dict (string keys), list, str, int, float, bool or None."""


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


def _by_value(enum: type[StrEnum]) -> dict[str, StrEnum]:
    """An enum's members by their values (and by themselves: a member is its value)."""
    return {member.value: member for member in enum}


_KINDS = _by_value(ActumKind)
_ACTOR_KINDS = _by_value(ActorKind)


def _as_member(members: Mapping[str, StrEnum], value: object) -> object:
    # A known string value becomes the enum member (``members``: :func:`_by_value`);
    # anything else is kept as given so that Chronicarius can refuse it with InvalidActum.
    if isinstance(value, str):
        return members.get(value, value)
    return value


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Actum:
    """One thing that happened in a chronicum.

    ``kind`` and ``actor_kind`` accept the enum member or its string value; a
    known string value is turned into the member. ``id`` and ``at`` are set by
    chronica when the actum is recorded. ``call_id`` ties a tool request to its
    tool response(s); ``data`` is any JSON value, the structured form of the actum
    (an agent framework's item), given back equal to what was recorded, while
    ``content`` stays the readable text.
    """

    chronicum_id: str
    kind: ActumKind
    actor_kind: ActorKind
    actor: str
    content: str = ""
    id: str = ""
    at: dt.datetime | None = None
    call_id: str = ""
    data: JSON = None
    #: Who wrote it, set by chronica (never by the caller): ``"owner"`` for the owner
    #: through an attested call (the API), ``"credential:<key ID>"`` for an agent's
    #: credential, ``None`` when not attested (a trusted server-side call, or a writer
    #: that knows only the seed's columns).
    recorded_by: str | None = None
    #: Set by chronica (never by the caller): on each actum of a compaction
    #: (``compact``), the ID of the actum ``through`` it compacts; ``""`` on every other.
    compacts: str = ""

    def __post_init__(self) -> None:
        # A member as given (as a store hands them) is kept without a word.
        if self.kind.__class__ is not ActumKind:
            object.__setattr__(self, "kind", _as_member(_KINDS, self.kind))
        if self.actor_kind.__class__ is not ActorKind:
            object.__setattr__(self, "actor_kind", _as_member(_ACTOR_KINDS, self.actor_kind))


@dataclasses.dataclass(frozen=True, slots=True)
class ActaQuery:
    """What a store's ``acta()`` receives.

    ``kinds``, ``actor_kinds`` and ``actors`` (actor IDs) filter (empty = all;
    :data:`FILTERS`); then the window is the
    newest acta that pass, at most ``last_n`` of them (``<= 0`` = no limit) and,
    with ``max_tokens``, as many as their token counts allow (the first actum that
    does not fit ends the window); ``before`` (an actum ID) takes the window from
    the acta recorded before that one. A store honours ``max_tokens`` and
    ``before`` only if it ``supports_window`` (:class:`chronica.interfaces.BaseStore`).
    """

    kinds: frozenset[ActumKind] = frozenset()
    actor_kinds: frozenset[ActorKind] = frozenset()
    last_n: int = 0
    max_tokens: int | None = None
    before: str | None = None
    actors: frozenset[str] = frozenset()

    #: A byte budget (UTF-8 bytes of content and data as JSON, newest first); the newest
    #: actum is kept whatever its size. ``CHRONICA["API_MAX_RESPONSE_BYTES"]`` in the API.
    max_bytes: int | None = None
    #: Hand each actum's ``data`` back as its stored JSON text (``chronica.RawJSON``),
    #: not decoded: what the API writes into its answers as it is.
    raw_data: bool = False
    #: The compacted window: the newest compaction's acta, then the acta recorded after
    #: its ``through`` that belong to no compaction (``BaseStore.supports_compaction``);
    #: the filters and limits run on that.
    compacted: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class Filter:
    """One filter of a window and of a follow, declared once in :data:`FILTERS`.

    Everything a filter is made of elsewhere comes from here: the keyword argument of
    ``get_acta`` and ``afollow`` and the :class:`ActaQuery` field (``field``), the
    query parameter ``?name=`` and the flag ``--name`` (``name``), the actum attribute
    and the column it compares (``attribute``), the values it may take (``choices``:
    the members of an enum; ``None``: identifiers, such as actor IDs) and its help.
    ``chronica.validation`` checks and builds it, ``chronica.windows`` and the SQL of
    ``chronica.stores.db`` apply it, the API, its OpenAPI schema and the commands offer
    it: a new filter is a field of ``ActaQuery`` and a line here.
    """

    field: str
    name: str
    attribute: str
    help: str
    choices: type[StrEnum] | None = None


FILTERS: tuple[Filter, ...] = (
    Filter("kinds", "kind", "kind", "only acta of these kinds", ActumKind),
    Filter(
        "actor_kinds", "actor_kind", "actor_kind", "only acta by actors of these kinds", ActorKind
    ),
    Filter("actors", "actor", "actor", "only acta by these actors (actor IDs)"),
)
"""Every filter of a window and of a follow (see :class:`Filter`), in the order the
API, its schema and the commands list them. An actum passes when, for each filter the
query sets (a non-empty set), its ``attribute`` is one of the values."""


class RecordedActa(list["Actum"]):
    """What ``record_acta`` returns: the acta as stored, in write order (a list), and
    ``replayed``: whether they are the acta an earlier call with the same idempotency
    key stored, with nothing written now."""

    replayed: bool = False

    def __init__(self, acta: Iterable[Actum] = (), *, replayed: bool = False) -> None:
        super().__init__(acta)
        self.replayed = replayed


@dataclasses.dataclass(frozen=True, slots=True)
class Recorded:
    """What a write stored: the acta (in write order), and whether they are a replay,
    the acta an earlier call with the same idempotency key stored, with nothing
    written now."""

    acta: list[Actum]
    replayed: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class ActaPage:
    """A context window and where the next, older page starts.

    ``acta`` is the window, oldest first. ``next_before`` is the ``before`` of the
    next page: the oldest actum the window's limits kept (before ``whole_tool_calls``
    left any tool response out), when an older actum passes the filters; else ``None``.
    """

    acta: list[Actum]
    next_before: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class ChronicaPage:
    """A page of an owner's chronica and where the next page starts: ``last`` is the
    last chronicum of this page when more follow it (the ``before`` of the next page),
    else ``None``."""

    chronica: list[Chronicum]
    last: Chronicum | None = None

    @property
    def next_before(self) -> Chronicum | None:
        """Deprecated: ``last`` (``ActaPage.next_before`` is an actum ID; this is a
        chronicum)."""
        import warnings

        warnings.warn(
            "ChronicaPage.next_before is deprecated: use ChronicaPage.last",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.last


# -- state beside the acta (BaseStore.supports_state) ------------------------------


class StateScope(StrEnum):
    """Where a state document lives, and so who reads and writes it.

    ``CHRONICUM``: the chronicum's own state, its owner's, gone with the chronicum.
    ``OWNER``: one owner's state in a namespace, shared by that owner's chronica there.
    ``NAMESPACE``: the namespace's state, shared by every owner who writes into it.
    """

    CHRONICUM = "chronicum"
    OWNER = "owner"
    NAMESPACE = "namespace"


_SCOPES = _by_value(StateScope)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StateChange:
    """One change to one state document, made in the same transaction as a write.

    A document is a JSON object. ``set`` sets its keys as ``dict.update`` does, in the
    object found at ``path`` (keys into nested objects, created where missing; ``()``
    is the document itself); with ``replace`` that object becomes ``set`` exactly.
    ``expect``, if given, must hold before the write changes anything: each of its
    keys has that value at the top of the document (a key the document lacks counts
    as ``None``), else the whole write is refused with ``StateConflict``.

    ``namespace`` names whose state it is (an agent framework's or an app's name).
    A chronicum's state belongs to one namespace: its first change names it.
    """

    namespace: str
    scope: StateScope = StateScope.CHRONICUM
    set: Mapping[str, JSON] = dataclasses.field(default_factory=dict)
    path: tuple[str, ...] = ()
    replace: bool = False
    expect: Mapping[str, JSON] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "scope", _as_member(_SCOPES, self.scope))


@dataclasses.dataclass(frozen=True, slots=True)
class StateView:
    """What ``get_state`` reads, in one consistent read.

    ``chronicum`` (``None`` when no chronicum was named) and its ``chronicum_state``
    (``None`` when it has none in this namespace); ``owner_state`` and
    ``namespace_state`` (``{}`` when nothing was stored); ``acta``, the window asked
    for (``None`` when none was).
    """

    chronicum: Chronicum | None
    chronicum_state: dict[str, JSON] | None
    owner_state: dict[str, JSON]
    namespace_state: dict[str, JSON]
    acta: list[Actum] | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class NamespaceListing:
    """The chronica that keep their state in one namespace, each with that state,
    oldest activity first (ties by owner, then ID); the owner state of every owner
    among them that has one; and the namespace's state."""

    chronica: list[tuple[Chronicum, dict[str, JSON]]]
    owner_states: dict[str, dict[str, JSON]]
    namespace_state: dict[str, JSON]
