"""The store contract. Structural: a store inherits nothing, it only has the methods."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .values import ActaQuery, Actum, Chronicum

__all__ = ["IdempotentStore", "Store"]


@runtime_checkable
class Store(Protocol):
    """Plain persistence for chronica and their acta. A store checks no owner and no actum.

    Promises (``chronica.storeconformance`` tests each of them):

    * ``create`` stores the chronicum as given; a taken ID raises ``ChronicumExists``.
    * ``record`` appends the actum keeping its ``id``, sets ``at`` to the moment it
      writes, bumps the chronicum's ``last_activity_at`` to that same moment and
      returns the full stored actum. A missing chronicum raises ``ChronicumNotFound``.
    * ``acta`` returns the acta in the order ``record`` was called (never by ``at``),
      filtered first, then cut to the last ``query.last_n`` (``<= 0`` = all).
      A missing chronicum raises ``ChronicumNotFound``, never an empty list.
    * ``get`` returns the chronicum or raises ``ChronicumNotFound``.
    * Concurrent ``record`` calls all land, none twice.
    """

    def create(self, chronicum: Chronicum) -> None: ...

    def record(self, actum: Actum) -> Actum: ...

    def acta(self, chronicum_id: str, query: ActaQuery) -> list[Actum]: ...

    def get(self, chronicum_id: str) -> Chronicum: ...


@runtime_checkable
class IdempotentStore(Store, Protocol):
    """A store that can record an actum at most once per key and chronicum.

    ``record_idempotent`` with a key already used in that chronicum returns the
    actum stored the first time and writes nothing (the stored actum wins, the new
    payload is discarded). Many concurrent calls with one key store exactly one
    actum and all of them return it.
    """

    def record_idempotent(self, actum: Actum, key: str) -> Actum: ...


@runtime_checkable
class OwnerScopedStore(Protocol):
    """An optional speed-up a store may add: the owner's check and the read or the
    write in one step (``DjangoStore`` does each in one SQL statement).

    Both answer ``None``, having read and written nothing, where the chronicum is
    missing or belongs to another owner; Chronicarius then takes the long way
    (``get``, ``create``, ``record``), which decides between the two cases. They
    check nothing else: every rule stays in Chronicarius.
    """

    def record_if_owner(self, owner_id: str, actum: Actum, key: str | None) -> Actum | None: ...

    def acta_if_owner(
        self, owner_id: str, chronicum_id: str, query: ActaQuery
    ) -> list[Actum] | None: ...
