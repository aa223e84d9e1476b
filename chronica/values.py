"""The frozen value types that cross every boundary of chronica (never ORM rows)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping
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

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", _as_member(ActumKind, self.kind))
        object.__setattr__(self, "actor_kind", _as_member(ActorKind, self.actor_kind))


STORED_ACTUM_FIELDS = (
    "chronicum_id",
    "kind",
    "actor_kind",
    "actor",
    "content",
    "id",
    "at",
    "call_id",
    "data",
    "recorded_by",
)
if tuple(f.name for f in dataclasses.fields(Actum)) != STORED_ACTUM_FIELDS:
    # stored_actum() sets every field by position: a field added to Actum must be
    # added there too, or acta read back from a store would lack it.
    raise RuntimeError("chronica.values.stored_actum() does not set every field of Actum")

_new = object.__new__
# Unpacking fails loudly if a field is added without a setter here.
(
    _set_chronicum_id,
    _set_kind,
    _set_actor_kind,
    _set_actor,
    _set_content,
    _set_id,
    _set_at,
    _set_call_id,
    _set_data,
    _set_recorded_by,
) = (getattr(Actum, name).__set__ for name in STORED_ACTUM_FIELDS)


class UnfrozenActum:
    """Actum's slots without its frozen ``__setattr__``: the same layout, so an actum
    read back from a store is filled in as one (each field set by the interpreter's own
    slot store) and then becomes an :class:`Actum` by ``__class__`` assignment, which
    Python allows between classes with the same ``__slots__``. That costs about a third
    of calling the ten slot setters (BENCHMARKS.md, issue 23). Only a store's reading
    code makes one, and none is left unfrozen."""

    __slots__ = Actum.__slots__
    # (the fields' annotations, for type checkers)
    chronicum_id: str
    kind: ActumKind
    actor_kind: ActorKind
    actor: str
    content: str
    id: str
    at: dt.datetime | None
    call_id: str
    data: JSON
    recorded_by: str | None


def _refreezes() -> bool:
    """Whether this Python turns an UnfrozenActum into an Actum (the same slots); else
    the acta are built with the slot setters."""
    probe = _new(UnfrozenActum)
    for name in STORED_ACTUM_FIELDS:
        setattr(probe, name, None)
    try:
        probe.__class__ = Actum  # type: ignore[assignment]
    except TypeError:
        return False
    return type(probe) is Actum  # type: ignore[comparison-overlap]


REFREEZES = _refreezes()


def stored_actum(
    chronicum_id: str,
    kind: ActumKind,
    actor_kind: ActorKind,
    actor: str,
    content: str,
    id: str,
    at: dt.datetime,
    call_id: str,
    data: JSON,
    recorded_by: str | None = None,
) -> Actum:
    """An actum read back from a store, whose values are already the right types
    (members, not strings, in ``kind`` and ``actor_kind``).

    A store builds a window dozens of acta at a time, and the frozen dataclass's
    ``__init__`` with ``__post_init__`` costs more than the rest of reading a row:
    this fills in an :class:`UnfrozenActum` and freezes it (or calls the slot
    descriptors directly; BENCHMARKS.md has the figures).
    """
    if REFREEZES:
        unfrozen = _new(UnfrozenActum)
        unfrozen.chronicum_id = chronicum_id
        unfrozen.kind = kind
        unfrozen.actor_kind = actor_kind
        unfrozen.actor = actor
        unfrozen.content = content
        unfrozen.id = id
        unfrozen.at = at
        unfrozen.call_id = call_id
        unfrozen.data = data
        unfrozen.recorded_by = recorded_by
        unfrozen.__class__ = Actum  # type: ignore[assignment]
        return unfrozen  # type: ignore[return-value]
    actum = _new(Actum)
    _set_chronicum_id(actum, chronicum_id)
    _set_kind(actum, kind)
    _set_actor_kind(actum, actor_kind)
    _set_actor(actum, actor)
    _set_content(actum, content)
    _set_id(actum, id)
    _set_at(actum, at)
    _set_call_id(actum, call_id)
    _set_data(actum, data)
    _set_recorded_by(actum, recorded_by)
    return actum


def restamped(actum: Actum, id: str, at: dt.datetime | None, recorded_by: object = ...) -> Actum:
    """A copy of a checked actum (members in ``kind`` and ``actor_kind``) with another
    ``id`` and ``at``: what ``dataclasses.replace`` gives, without ``__init__`` (a write
    makes two such copies of each actum)."""
    return stored_actum(
        actum.chronicum_id,
        actum.kind,
        actum.actor_kind,
        actum.actor,
        actum.content,
        id,
        at,  # type: ignore[arg-type]
        actum.call_id,
        actum.data,
        actum.recorded_by if recorded_by is ... else recorded_by,  # type: ignore[arg-type]
    )


@dataclasses.dataclass(frozen=True, slots=True)
class ActaQuery:
    """What a store's ``acta()`` receives.

    ``kinds``, ``actor_kinds`` and ``actors`` (actor IDs) filter (empty = all;
    :data:`FILTERS`); then the window is the
    newest acta that pass, at most ``last_n`` of them (``<= 0`` = no limit) and,
    with ``max_tokens``, as many as their token counts allow (the first actum that
    does not fit ends the window); ``before`` (an actum ID) takes the window from
    the acta recorded before that one. A store honours ``max_tokens`` and
    ``before`` only if it is a :class:`chronica.interfaces.WindowStore`.
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
    """A page of an owner's chronica and where the next page starts: ``next_before``
    is the last chronicum of this page when more follow it, else ``None``."""

    chronica: list[Chronicum]
    next_before: Chronicum | None = None


# -- state beside the acta (chronica.interfaces.StateStore) -----------------------


class StateScope(StrEnum):
    """Where a state document lives, and so who reads and writes it.

    ``CHRONICUM``: the chronicum's own state, its owner's, gone with the chronicum.
    ``OWNER``: one owner's state in a namespace, shared by that owner's chronica there.
    ``NAMESPACE``: the namespace's state, shared by every owner who writes into it.
    """

    CHRONICUM = "chronicum"
    OWNER = "owner"
    NAMESPACE = "namespace"


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
        object.__setattr__(self, "scope", _as_member(StateScope, self.scope))


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
