"""What every part of Chronicarius stands on: its store's capabilities, the owner's
check, and the signals sent after a commit."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import functools
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, ClassVar, Concatenate, ParamSpec, Self, TypeVar

from asgiref.sync import sync_to_async

from ..errors import (
    ChronicumExists,
    ChronicumNotFound,
    InvalidQuery,
    NotPermitted,
    StoreUnsupported,
)
from ..interfaces import ABILITIES, BaseStore, IdempotentStore, Store
from ..tokens import estimate_tokens
from ..validation.acta import DEFAULT_MAX_ACTUM_BYTES
from ..validation.identifiers import storable
from ..values import ActaQuery, ActorKind, Actum, ActumKind, Chronicum, StateChange
from .identity import AgentIdentity, Identity

__all__ = [
    "ActorKinds",
    "ChronicariusBase",
    "Kinds",
    "TokenCounter",
    "Write",
    "asend",
    "async_twin",
    "new_id",
    "send",
]

logger = logging.getLogger("chronica")

Kinds = Iterable[ActumKind | str] | ActumKind | str | None
ActorKinds = Iterable[ActorKind | str] | ActorKind | str | None
TokenCounter = Callable[[Actum], int]

_P = ParamSpec("_P")
_R = TypeVar("_R")
_S = TypeVar("_S", bound="ChronicariusBase")


def new_id() -> str:
    """32 lowercase hex characters from the system's secure random source."""
    return secrets.token_hex(16)


def async_twin(
    method: Callable[Concatenate[_S, _P], _R],
) -> Callable[Concatenate[_S, _P], Awaitable[_R]]:
    """The ``a*`` twin of a Chronicarius method: the same call in a worker thread."""

    @functools.wraps(method)
    async def twin(self: _S, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        return await sync_to_async(method)(self, *args, **kwargs)

    twin.__name__ = f"a{method.__name__}"
    twin.__qualname__ = f"Chronicarius.a{method.__name__}"
    twin.__doc__ = f"Async twin of :meth:`{method.__name__}`."
    return twin


class ChronicariusBase:
    """The store Chronicarius enforces the rules on, and which capabilities it has
    (asked once, here); the owner's check every call makes."""

    #: The ``sender`` of chronica's signals: ``Chronicarius`` (set where it is defined).
    signal_sender: ClassVar[type]
    #: Who the calls are made by (``acting_as``); ``None``: a trusted server-side caller.
    identity: Identity | None = None

    def __init__(
        self,
        store: Store,
        *,
        id_factory: Callable[[], str] | None = None,
        token_counter: TokenCounter | None = None,
        max_actum_bytes: int | None = DEFAULT_MAX_ACTUM_BYTES,
        poll_interval: float = 1.0,
        auto_create: bool = True,
    ) -> None:
        if not isinstance(auto_create, bool):
            raise TypeError(f"auto_create must be True or False, not {auto_create!r}")
        self.store = store
        #: Whether a write into a missing chronicum creates it for its writer (the
        #: seed's rule 5); with ``False`` only ``create_chronicum`` creates.
        self.auto_create = auto_create
        self.id_factory = id_factory or new_id
        self.token_counter = token_counter or estimate_tokens
        self.max_actum_bytes = max_actum_bytes
        self.poll_interval = poll_interval
        # What the store can do, asked once (``chronica.interfaces``).
        abilities = {name for name in ABILITIES if getattr(store, f"supports_{name}", False)}
        self._appends = "append" in abilities
        self._windows = "window" in abilities
        self._idempotent = self._appends or isinstance(store, IdempotentStore)
        self._listing = "listing" in abilities
        # A delete frees a chronicum ID for any owner: a store may delete only if its
        # writes and windows check the owner in the same step as they append or read.
        self._deleting = "delete" in abilities and self._appends and self._windows
        self._popping = "pop" in abilities
        self._following = "follow" in abilities
        self._states = "state" in abilities and self._appends
        self._forking = "fork" in abilities
        self._compacting = "compaction" in abilities
        on_commit = getattr(store, "on_commit", None)
        self._on_commit: Callable[[Callable[[], None]], None] | None = on_commit
        self._abilities = frozenset(abilities)

    def __repr__(self) -> str:
        if self.identity is not None:
            return f"<Chronicarius store={self.store!r} acting as {self.identity!r}>"
        return f"<Chronicarius store={self.store!r}>"

    def acting_as(self, identity: Identity | None) -> Self:
        """This Chronicarius, for calls made by ``identity``: the owner in person
        (``OwnerIdentity``) or an agent's credential (``AgentIdentity``), whose rules
        every call then enforces, and whose ``recorded_by`` every actum written carries.
        The same store and settings; cheap (a shallow copy)."""
        if identity is not None and not isinstance(identity, Identity):
            raise TypeError(f"acting_as takes an identity, not {type(identity).__name__}")
        twin = copy.copy(self)
        twin.identity = identity
        return twin

    @property
    def _recorded_by(self) -> str | None:
        return None if self.identity is None else self.identity.recorded_by

    def _admit(
        self, owner_id: str | None, chronicum_id: str | None = None, *, action: str = ""
    ) -> None:
        """The identity's rules for a call on ``owner_id``'s ``chronicum_id``: another
        owner's chronica, and those its credential does not name, are not found; a
        listing, delete or pop (``action``) it does not allow is ``NotPermitted``."""
        identity = self.identity
        if identity is None:
            return
        if owner_id != identity.owner_id:
            if chronicum_id is not None:
                raise ChronicumNotFound(chronicum_id)
            raise NotPermitted(
                f"this credential acts for its own owner only, not for {owner_id!r}",
                rule="owner",
            )
        if not isinstance(identity, AgentIdentity):
            return
        if chronicum_id is not None and not identity.allows(chronicum_id):
            raise ChronicumNotFound(chronicum_id)
        if action and not getattr(identity, f"may_{action}", False):
            raise NotPermitted(
                f"the credential of {identity.actor!r} ({identity.key_id}) may not {action}:"
                f" it is the owner's to {action}, unless the credential allows it",
                rule=action,
            )

    def _after_commit(self, callback: Callable[[], None]) -> None:
        if self._on_commit is not None:
            self._on_commit(callback)
        else:
            callback()

    def _require(self, ability: bool, what: str, flag: str) -> BaseStore:
        """The store, which must have ``ability`` (its ``supports_*`` flag ``flag``)."""
        if not ability:
            raise StoreUnsupported(f"{type(self.store).__name__} cannot {what} ({flag})")
        return self.store  # type: ignore[return-value]

    def _compacted(self, query: ActaQuery, compacted: object) -> ActaQuery:
        """``query``, compacted where asked (the store must keep compactions)."""
        if not isinstance(compacted, bool):
            raise InvalidQuery(f"compacted must be True or False, not {compacted!r}")
        if not compacted:
            return query
        self._require(self._compacting, "read a compacted window", "supports_compaction")
        return dataclasses.replace(query, compacted=True)

    # -- ownership -------------------------------------------------------

    def _check_ids(self, owner_id: str, chronicum_id: str) -> None:
        if not (isinstance(owner_id, str) and isinstance(chronicum_id, str)):
            for name, value in (("owner_id", owner_id), ("chronicum_id", chronicum_id)):
                if not isinstance(value, str):
                    raise InvalidQuery(f"{name} must be a string, not {type(value).__name__}")
        if not (storable(owner_id) and storable(chronicum_id)):
            # No store can hold such an ID, so no such chronicum exists.
            raise ChronicumNotFound(chronicum_id)
        # Every call on one chronicum comes here: the identity's rules, if any.
        self._admit(owner_id, chronicum_id)

    def _own(self, owner_id: str, chronicum_id: str, *, create: bool = False) -> Chronicum:
        """The chronicum, if it is ``owner_id``'s; with ``create``, a missing one is
        created for ``owner_id`` first."""
        self._check_ids(owner_id, chronicum_id)
        try:
            chronicum = self.store.get(chronicum_id)
        except ChronicumNotFound:
            if not create:
                raise
            now = dt.datetime.now(dt.UTC)
            chronicum = Chronicum(chronicum_id, owner_id, now, now)
            try:
                self.store.create(chronicum)
            except ChronicumExists:
                # Someone created it first: if it was this owner (two first
                # writes racing), record anyway; if not, it is not ours.
                chronicum = self.store.get(chronicum_id)
        if chronicum.owner_id != owner_id:
            raise ChronicumNotFound(chronicum_id)
        return chronicum


@dataclasses.dataclass(frozen=True)
class Write:
    """A write checked and ready for the store: new IDs, the key, token counts."""

    acta: list[Actum]
    key: str | None
    tokens: list[int]
    chronicum_id: str
    changes: list[StateChange] = dataclasses.field(default_factory=list)


async def asend(signal: Any, sender: type, **kwargs: Any) -> None:
    # As send; sync receivers run in a thread, async ones are awaited.
    try:
        await signal.asend_robust(sender=sender, **kwargs)
    except Exception:
        logger.exception("chronica: sending %s failed", signal.name)


def send(signal: Any, sender: type, **kwargs: Any) -> None:
    # A receiver that fails must not undo or un-acknowledge a write that has
    # committed: the signal logs each failing receiver and runs the others.
    try:
        signal.send_robust(sender=sender, **kwargs)
    except Exception:
        logger.exception("chronica: sending %s failed", signal.name)
