"""Who a call is made by, when the caller says so: the owner in person, or an agent
holding a credential the owner issued (``chronica.services.credentials``).

A Chronicarius ``acting_as`` an identity enforces the identity's rules on every call
(``ChronicariusBase._admit`` and the write's ``_attest``) and stamps ``recorded_by`` on
what it writes. A Chronicarius acting as no one is a trusted server-side caller: it
writes as any actor, and its acta are recorded as not attested (``recorded_by`` NULL).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from ..values import ActorKind

__all__ = ["NOT_ATTESTED", "AgentIdentity", "Identity", "OwnerIdentity", "provenance"]


@dataclasses.dataclass(frozen=True, slots=True)
class OwnerIdentity:
    """The owner in person (signed in as themselves): writes as any actor, as before;
    its acta are recorded as the owner's."""

    owner_id: str

    @property
    def recorded_by(self) -> str:
        return "owner"


@dataclasses.dataclass(frozen=True, slots=True)
class AgentIdentity:
    """An agent holding a credential: it writes only as ``actor``, with one of
    ``actor_kinds``, into ``owner_id``'s chronica (only those in ``chronica`` when that
    is not ``None``); it lists, deletes or pops only where the credential says so."""

    owner_id: str
    actor: str
    key_id: str
    actor_kinds: frozenset[ActorKind] = frozenset({ActorKind.AGENT})
    chronica: frozenset[str] | None = None
    may_list: bool = False
    may_delete: bool = False
    may_pop: bool = False

    def __post_init__(self) -> None:
        kinds = frozenset(ActorKind(k) for k in self.actor_kinds)
        if not kinds:
            raise ValueError("an agent credential needs at least one actor kind")
        if ActorKind.HUMAN in kinds:
            raise ValueError("an agent credential never writes as a human")
        object.__setattr__(self, "actor_kinds", kinds)
        if self.chronica is not None:
            object.__setattr__(self, "chronica", frozenset(self.chronica))

    @property
    def recorded_by(self) -> str:
        return f"credential:{self.key_id}"

    def allows(self, chronicum_id: str) -> bool:
        """Whether the credential names ``chronicum_id``, or names none."""
        return self.chronica is None or chronicum_id in self.chronica

    @property
    def default_kind(self) -> ActorKind:
        """The actor kind a write that names none gets: ``agent`` if allowed."""
        if ActorKind.AGENT in self.actor_kinds:
            return ActorKind.AGENT
        return min(self.actor_kinds)


Identity = OwnerIdentity | AgentIdentity


def kinds_of(values: Iterable[str]) -> frozenset[ActorKind]:
    return frozenset(ActorKind(v) for v in values)


NOT_ATTESTED = "not attested"


def provenance(recorded_by: str | None) -> str:
    """``Actum.recorded_by`` in words, as the admin transcript and ``chronica_show`` show
    it beside the actor: ``owner``, ``credential <key ID>``, or ``not attested``."""
    if recorded_by is None:
        return NOT_ATTESTED
    if recorded_by.startswith("credential:"):
        return "credential " + recorded_by.removeprefix("credential:")
    return recorded_by
