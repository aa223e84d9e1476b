"""The session lifecycle: create, list, delete, pop."""

from __future__ import annotations

import datetime as dt

from ..errors import ChronicumNotFound, InvalidQuery
from ..signals import chronicum_deleted
from ..validation.identifiers import check_chronicum_id, check_identifier, check_owner, storable
from ..validation.queries import check_listing
from ..values import (
    Actum,
    ChronicaPage,
    Chronicum,
)
from .base import ChronicariusBase, async_twin, send
from .identity import AgentIdentity

__all__ = ["Lifecycle"]


class Lifecycle(ChronicariusBase):
    """Chronica as a person manages them: create, list, delete; pop the newest actum."""

    def create_chronicum(self, owner_id: str, chronicum_id: str | None = None) -> Chronicum:
        """Create an empty chronicum for ``owner_id``: with no ID, a new unguessable one
        from ``id_factory``. An ID that is taken, by anyone, raises ``ChronicumExists``."""
        check_owner(owner_id)
        check_identifier("owner_id", owner_id)
        chronicum_id = self.id_factory() if chronicum_id is None else chronicum_id
        check_chronicum_id(chronicum_id)
        self._admit(owner_id, chronicum_id)
        now = dt.datetime.now(dt.UTC)
        chronicum = Chronicum(chronicum_id, owner_id, now, now)
        self.store.create(chronicum)
        return chronicum

    def list_chronica(
        self, owner_id: str, *, limit: int = 100, before: Chronicum | str | None = None
    ) -> list[Chronicum]:
        """The owner's chronica, latest ``last_activity_at`` first (ties by ID), at most
        ``limit`` (1 to 1000). ``before`` is the last chronicum of the previous page
        (or its ID), and the page starts after it."""
        return self._list(owner_id, limit, before, 0)

    def list_chronica_page(
        self, owner_id: str, *, limit: int = 100, before: Chronicum | str | None = None
    ) -> ChronicaPage:
        """The page :meth:`list_chronica` answers for the same arguments, and whether
        more follow it, from the same read: ``ChronicaPage(chronica, last)``, ``last``
        the page's last chronicum when more follow (the next page's ``before``), else
        ``None``."""
        found = self._list(owner_id, limit, before, 1)
        if len(found) > limit:
            return ChronicaPage(found[:limit], found[limit - 1])
        return ChronicaPage(found)

    def _list(
        self, owner_id: str, limit: int, before: Chronicum | str | None, more: int
    ) -> list[Chronicum]:
        """The page of ``list_chronica``, and ``more`` chronica after it."""
        check_owner(owner_id)
        self._admit(owner_id, action="list")
        limit, position = check_listing(limit, before)
        store = self._require(self._listing, "list chronica", "supports_listing")
        if not storable(owner_id):
            return []
        if isinstance(position, str):
            try:
                position = self._own(owner_id, position)
            except ChronicumNotFound:
                raise InvalidQuery(
                    f"before={position!r} is not a chronicum of this owner"
                ) from None
        found = store.list_chronica(owner_id, limit + more, position)
        identity = self.identity
        if isinstance(identity, AgentIdentity) and identity.chronica is not None:
            # A credential limited to named chronica lists only those.
            found = [chronicum for chronicum in found if identity.allows(chronicum.id)]
        return found

    def delete_chronicum(self, owner_id: str, chronicum_id: str) -> None:
        """Delete the chronicum and all its acta. Someone else's, or a missing one,
        raises ``ChronicumNotFound``. A write racing with the delete lands before it
        (and goes with it) or after it, in the chronicum created again for its writer."""
        check_owner(owner_id)
        store = self._require(
            self._deleting,
            "delete a chronicum (only a store that appends and reads with the owner"
            " checked can: supports_append and supports_window)",
            "supports_delete",
        )
        self._check_ids(owner_id, chronicum_id)
        self._admit(owner_id, chronicum_id, action="delete")
        if not store.delete(owner_id, chronicum_id):
            raise ChronicumNotFound(chronicum_id)
        if chronicum_deleted.has_listeners():
            self._after_commit(
                lambda: send(
                    chronicum_deleted,
                    self.signal_sender,
                    owner_id=owner_id,
                    chronicum_id=chronicum_id,
                )
            )

    def pop_actum(self, owner_id: str, chronicum_id: str) -> Actum | None:
        """Remove and return the newest actum (in write order); ``None`` when the
        chronicum has none. Two concurrent pops never return the same actum."""
        check_owner(owner_id)
        store = self._require(self._popping, "pop an actum", "supports_pop")
        self._check_ids(owner_id, chronicum_id)
        self._admit(owner_id, chronicum_id, action="pop")
        return store.pop(owner_id, chronicum_id)

    acreate_chronicum = async_twin(create_chronicum)
    alist_chronica = async_twin(list_chronica)
    alist_chronica_page = async_twin(list_chronica_page)
    adelete_chronicum = async_twin(delete_chronicum)
    apop_actum = async_twin(pop_actum)
