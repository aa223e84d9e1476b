"""State beside the acta: JSON documents changed in the same transaction as a write."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Sequence

from asgiref.sync import sync_to_async

from ..errors import ChronicumNotFound
from ..interfaces import AsyncStateStore
from ..validation import (
    build_query,
    check_chronicum_id,
    check_identifier,
    check_owner,
    check_state_changes,
)
from ..values import ActaQuery, Chronicum, NamespaceListing, StateChange, StateView
from .base import ChronicariusBase, async_twin
from .identity import AgentIdentity

__all__ = ["State"]


class State(ChronicariusBase):
    """A chronicum's, an owner's and a namespace's state (``StateStore``)."""

    def update_state(
        self,
        owner_id: str,
        chronicum_id: str,
        state: Sequence[StateChange],
        *,
        create: bool = False,
    ) -> None:
        """Make ``state`` changes for a chronicum of ``owner_id`` (its own state, the
        owner's and the namespace's, as :meth:`record` does with acta), in one
        transaction. With ``create``, the chronicum is created in that transaction
        (``ChronicumExists`` if the ID is taken, by anyone); without, a missing one or
        someone else's is ``ChronicumNotFound``. ``StateConflict`` if an ``expect``
        does not hold; nothing is changed then."""
        check_owner(owner_id)
        check_identifier("owner_id", owner_id)
        changes = check_state_changes(state, self.max_actum_bytes)
        store = self._require(self._states, "keep state (it is not a StateStore)")
        fresh = None
        if create:
            check_chronicum_id(chronicum_id)
            self._admit(owner_id, chronicum_id)
            now = dt.datetime.now(dt.UTC)
            fresh = Chronicum(chronicum_id, owner_id, now, now)
        else:
            self._check_ids(owner_id, chronicum_id)
        if store.write_state(owner_id, chronicum_id, [], None, [], changes, fresh) is None:
            raise ChronicumNotFound(chronicum_id)

    def get_state(
        self,
        owner_id: str,
        namespace: str,
        chronicum_id: str | None = None,
        *,
        acta: bool = False,
        last_n: int = 0,
    ) -> StateView:
        """The state ``owner_id`` may read in ``namespace``, in one consistent read: the
        chronicum ``chronicum_id`` of ``owner_id`` (``None`` if it is missing or someone
        else's, and then nothing of it) with its state, the owner's state and the
        namespace's; with ``acta``, the chronicum's window of the last ``last_n`` acta
        (``<= 0``: all)."""
        chronicum_id, query = self._state_read(owner_id, namespace, chronicum_id, acta, last_n)
        store = self._require(self._states, "keep state (it is not a StateStore)")
        return store.read_state(owner_id, namespace, chronicum_id, query)

    def _state_read(
        self, owner_id: str, namespace: str, chronicum_id: str | None, acta: bool, last_n: int
    ) -> tuple[str | None, ActaQuery | None]:
        """The checks of ``get_state``; the chronicum to read and the window's query."""
        check_owner(owner_id)
        check_identifier("namespace", namespace)
        self._admit(owner_id)
        query = build_query(last_n=last_n) if acta else None
        if chronicum_id is not None:
            try:
                self._check_ids(owner_id, chronicum_id)
            except ChronicumNotFound:
                # No store holds such an ID: read the rest only, under an ID no
                # chronicum has ("" is none's) and every database takes (not a NUL).
                chronicum_id = ""
        return chronicum_id, query

    def list_namespace(self, namespace: str, *, owner_id: str | None = None) -> NamespaceListing:
        """The chronica whose state is in ``namespace`` (only ``owner_id``'s when given),
        oldest activity first, each with its state; the owner states of their owners;
        the namespace state.

        Without ``owner_id`` this lists every owner's chronica of the namespace, as an
        agent framework's app-wide listing must (ADK's ``list_sessions`` without a
        user): call it only from the app's own code, never with a namespace a caller
        chose, and never to answer a request that only one owner's credentials made.
        """
        self._listing_checks(namespace, owner_id)
        store = self._require(self._states, "keep state (it is not a StateStore)")
        return self._listed(store.list_namespace(namespace, owner_id))

    def _listing_checks(self, namespace: str, owner_id: str | None) -> None:
        check_identifier("namespace", namespace)
        if owner_id is not None:
            check_owner(owner_id)
        self._admit(owner_id, action="list")

    def _listed(self, listing: NamespaceListing) -> NamespaceListing:
        """``listing`` cut to the chronica the identity's credential names, if any."""
        identity = self.identity
        if isinstance(identity, AgentIdentity) and identity.chronica is not None:
            kept = [(c, s) for c, s in listing.chronica if identity.allows(c.id)]
            listing = dataclasses.replace(listing, chronica=kept)
        return listing

    def _async_states(self) -> AsyncStateStore | None:
        """The store's asyncio path for state reads, where it has one that works here.
        Asked once: ``isinstance`` of a runtime protocol looks each of its methods up
        (5 µs, a hundredth of an ADK session read)."""
        try:
            return self._native_states
        except AttributeError:
            pass
        native = self._async_store()
        found = native if self._states is not None and isinstance(native, AsyncStateStore) else None
        self._native_states: AsyncStateStore | None = found
        return found

    async def aget_state(
        self,
        owner_id: str,
        namespace: str,
        chronicum_id: str | None = None,
        *,
        acta: bool = False,
        last_n: int = 0,
    ) -> StateView:
        """Async twin of :meth:`get_state` (no worker thread where the store has an
        asyncio path: ``DjangoStore`` on PostgreSQL)."""
        native = self._async_states()
        if native is None:
            return await sync_to_async(self.get_state)(
                owner_id, namespace, chronicum_id, acta=acta, last_n=last_n
            )
        chronicum_id, query = self._state_read(owner_id, namespace, chronicum_id, acta, last_n)
        return await native.aread_state(owner_id, namespace, chronicum_id, query)

    async def alist_namespace(
        self, namespace: str, *, owner_id: str | None = None
    ) -> NamespaceListing:
        """Async twin of :meth:`list_namespace` (no worker thread where the store has
        an asyncio path)."""
        native = self._async_states()
        if native is None:
            return await sync_to_async(self.list_namespace)(namespace, owner_id=owner_id)
        self._listing_checks(namespace, owner_id)
        return self._listed(await native.alist_namespace(namespace, owner_id))

    aupdate_state = async_twin(update_state)
