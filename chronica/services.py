"""The rules of chronica, in one place.

``Chronicarius`` enforces every rule of the contract on top of a plain store.
The module functions (``record_actum``, ``get_acta``, ``get_chronicum`` and
their ``a*`` twins) call a Chronicarius built once from ``settings.CHRONICA``
and rebuilt when that setting changes. Only the module functions need Django
settings; ``Chronicarius`` itself works in any Python process.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import secrets
import threading
from collections.abc import Callable, Iterable
from typing import Any

from asgiref.sync import sync_to_async
from django.core.signals import setting_changed

from .errors import ChronicumExists, ChronicumNotFound, IdempotencyUnsupported
from .interfaces import IdempotentStore, OwnerScopedStore, Store
from .validation import build_query, check_actum, check_owner, normalize_key, storable
from .values import ActorKind, Actum, ActumKind, Chronicum

__all__ = [
    "Chronicarius",
    "aget_acta",
    "aget_chronicum",
    "arecord_actum",
    "arecord_actum_replayed",
    "get_acta",
    "get_chronicarius",
    "get_chronicum",
    "record_actum",
    "record_actum_replayed",
]

Kinds = Iterable[ActumKind | str] | ActumKind | str | None
ActorKinds = Iterable[ActorKind | str] | ActorKind | str | None


def new_id() -> str:
    """32 lowercase hex characters from the system's secure random source."""
    return secrets.token_hex(16)


def _check_id(name: str, value: object) -> None:
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string, not {type(value).__name__}")


class Chronicarius:
    """The one object that enforces the rules; apps talk only to it.

    Every call names an owner. A chronicum that belongs to someone else answers
    ``ChronicumNotFound``, exactly like one that does not exist. Errors that are
    not chronica's own (a lost database connection) come back as they were raised.
    """

    def __init__(self, store: Store, *, id_factory: Callable[[], str] | None = None) -> None:
        self.store = store
        self.id_factory = id_factory or new_id
        self._idempotent = isinstance(store, IdempotentStore)
        self._scoped = store if isinstance(store, OwnerScopedStore) else None

    def __repr__(self) -> str:
        return f"<Chronicarius store={self.store!r}>"

    # -- the three calls -------------------------------------------------

    def record_actum(
        self, owner_id: str, actum: Actum, *, idempotency_key: str | None = None
    ) -> Actum:
        """Record ``actum`` for ``owner_id`` and return it as stored.

        Validates before touching the store (``InvalidActum``), creates the
        chronicum for ``owner_id`` on its first actum, gives the actum a new ID and
        returns the stored actum. With an ``idempotency_key`` already used in that
        chronicum, returns the actum stored the first time and writes nothing.
        """
        stored, _replayed = self.record_actum_replayed(
            owner_id, actum, idempotency_key=idempotency_key
        )
        return stored

    def record_actum_replayed(
        self, owner_id: str, actum: Actum, *, idempotency_key: str | None = None
    ) -> tuple[Actum, bool]:
        """:meth:`record_actum`, and whether the stored actum is a replay.

        A replay is the actum an earlier call with the same idempotency key stored,
        returned now with nothing written (the HTTP API answers it with 200, not
        201). Told apart by its ID, so ``id_factory`` must not repeat IDs.
        """
        check_owner(owner_id)
        key = normalize_key(idempotency_key)
        check_actum(owner_id, actum, key)
        if key is not None and not self._idempotent:
            raise IdempotencyUnsupported(
                f"{type(self.store).__name__} does not implement IdempotentStore"
            )
        new_id = self.id_factory()
        to_store = dataclasses.replace(actum, id=new_id, at=None)
        if self._scoped is not None:
            # check_actum has made owner_id and chronicum_id storable strings.
            stored = self._scoped.record_if_owner(owner_id, to_store, key)
            if stored is not None:
                return stored, stored.id != new_id
        self._own(owner_id, actum.chronicum_id, create=True)
        if key is None:
            return self.store.record(to_store), False
        stored = self.store.record_idempotent(to_store, key)  # type: ignore[attr-defined]
        return stored, stored.id != new_id

    def get_acta(
        self,
        owner_id: str,
        chronicum_id: str,
        *,
        kinds: Kinds = None,
        actor_kinds: ActorKinds = None,
        last_n: int = 0,
    ) -> list[Actum]:
        """Return the context window: filtered by kinds and actor kinds, then the last
        ``last_n`` (``<= 0`` = all), oldest first in write order."""
        check_owner(owner_id)
        query = build_query(kinds, actor_kinds, last_n)
        if self._scoped is not None:
            self._check_ids(owner_id, chronicum_id)
            acta = self._scoped.acta_if_owner(owner_id, chronicum_id, query)
            if acta is None:
                raise ChronicumNotFound(chronicum_id)
            return acta
        self._own(owner_id, chronicum_id)
        return self.store.acta(chronicum_id, query)

    def get_chronicum(self, owner_id: str, chronicum_id: str) -> Chronicum:
        """Return the chronicum if it belongs to ``owner_id``, else ``ChronicumNotFound``."""
        check_owner(owner_id)
        return self._own(owner_id, chronicum_id)

    # -- async twins -----------------------------------------------------

    async def arecord_actum(
        self, owner_id: str, actum: Actum, *, idempotency_key: str | None = None
    ) -> Actum:
        """Async twin of :meth:`record_actum`."""
        return await sync_to_async(self.record_actum)(
            owner_id, actum, idempotency_key=idempotency_key
        )

    async def arecord_actum_replayed(
        self, owner_id: str, actum: Actum, *, idempotency_key: str | None = None
    ) -> tuple[Actum, bool]:
        """Async twin of :meth:`record_actum_replayed`."""
        return await sync_to_async(self.record_actum_replayed)(
            owner_id, actum, idempotency_key=idempotency_key
        )

    async def aget_acta(
        self,
        owner_id: str,
        chronicum_id: str,
        *,
        kinds: Kinds = None,
        actor_kinds: ActorKinds = None,
        last_n: int = 0,
    ) -> list[Actum]:
        """Async twin of :meth:`get_acta`."""
        return await sync_to_async(self.get_acta)(
            owner_id, chronicum_id, kinds=kinds, actor_kinds=actor_kinds, last_n=last_n
        )

    async def aget_chronicum(self, owner_id: str, chronicum_id: str) -> Chronicum:
        """Async twin of :meth:`get_chronicum`."""
        return await sync_to_async(self.get_chronicum)(owner_id, chronicum_id)

    # -- ownership -------------------------------------------------------

    @staticmethod
    def _check_ids(owner_id: str, chronicum_id: str) -> None:
        _check_id("owner_id", owner_id)
        _check_id("chronicum_id", chronicum_id)
        if not (storable(owner_id) and storable(chronicum_id)):
            # No store can hold such an ID, so no such chronicum exists.
            raise ChronicumNotFound(chronicum_id)

    def _own(self, owner_id: str, chronicum_id: str, *, create: bool = False) -> Chronicum:
        """Rule 4 (and 5 when ``create``): the chronicum, if it is ``owner_id``'s."""
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


# -- the configured Chronicarius ------------------------------------------

_lock = threading.Lock()
_configured: Chronicarius | None = None


def get_chronicarius() -> Chronicarius:
    """The Chronicarius built from ``settings.CHRONICA``, built once and cached."""
    global _configured
    chronicarius = _configured
    if chronicarius is None:
        with _lock:
            if _configured is None:
                from .conf import chronica_settings

                _configured = Chronicarius(chronica_settings.build_store())
            chronicarius = _configured
    return chronicarius


def reset_chronicarius() -> None:
    """Forget the cached Chronicarius; the next call builds it from settings again."""
    global _configured
    with _lock:
        _configured = None


def _on_setting_changed(*, setting: str, **kwargs: Any) -> None:
    if setting == "CHRONICA":
        reset_chronicarius()


setting_changed.connect(_on_setting_changed, dispatch_uid="chronica.services.setting_changed")


def record_actum(owner_id: str, actum: Actum, *, idempotency_key: str | None = None) -> Actum:
    """:meth:`Chronicarius.record_actum` on the configured store."""
    return get_chronicarius().record_actum(owner_id, actum, idempotency_key=idempotency_key)


def record_actum_replayed(
    owner_id: str, actum: Actum, *, idempotency_key: str | None = None
) -> tuple[Actum, bool]:
    """:meth:`Chronicarius.record_actum_replayed` on the configured store."""
    return get_chronicarius().record_actum_replayed(
        owner_id, actum, idempotency_key=idempotency_key
    )


def get_acta(
    owner_id: str,
    chronicum_id: str,
    *,
    kinds: Kinds = None,
    actor_kinds: ActorKinds = None,
    last_n: int = 0,
) -> list[Actum]:
    """:meth:`Chronicarius.get_acta` on the configured store."""
    return get_chronicarius().get_acta(
        owner_id, chronicum_id, kinds=kinds, actor_kinds=actor_kinds, last_n=last_n
    )


def get_chronicum(owner_id: str, chronicum_id: str) -> Chronicum:
    """:meth:`Chronicarius.get_chronicum` on the configured store."""
    return get_chronicarius().get_chronicum(owner_id, chronicum_id)


async def arecord_actum(
    owner_id: str, actum: Actum, *, idempotency_key: str | None = None
) -> Actum:
    """Async twin of :func:`record_actum`."""
    return await sync_to_async(record_actum)(owner_id, actum, idempotency_key=idempotency_key)


async def arecord_actum_replayed(
    owner_id: str, actum: Actum, *, idempotency_key: str | None = None
) -> tuple[Actum, bool]:
    """Async twin of :func:`record_actum_replayed`."""
    return await sync_to_async(record_actum_replayed)(
        owner_id, actum, idempotency_key=idempotency_key
    )


async def aget_acta(
    owner_id: str,
    chronicum_id: str,
    *,
    kinds: Kinds = None,
    actor_kinds: ActorKinds = None,
    last_n: int = 0,
) -> list[Actum]:
    """Async twin of :func:`get_acta`."""
    return await sync_to_async(get_acta)(
        owner_id, chronicum_id, kinds=kinds, actor_kinds=actor_kinds, last_n=last_n
    )


async def aget_chronicum(owner_id: str, chronicum_id: str) -> Chronicum:
    """Async twin of :func:`get_chronicum`."""
    return await sync_to_async(get_chronicum)(owner_id, chronicum_id)
