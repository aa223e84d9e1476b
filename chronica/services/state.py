"""State beside the acta: JSON documents changed in the same transaction as a write."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Sequence

from ..errors import ChronicumNotFound
from ..validation import (
    build_query,
    check_chronicum_id,
    check_identifier,
    check_owner,
    check_state_changes,
)
from ..values import Chronicum, NamespaceListing, StateChange, StateView
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
        check_owner(owner_id)
        check_identifier("namespace", namespace)
        self._admit(owner_id)
        store = self._require(self._states, "keep state (it is not a StateStore)")
        query = build_query(last_n=last_n) if acta else None
        if chronicum_id is not None:
            try:
                self._check_ids(owner_id, chronicum_id)
            except ChronicumNotFound:
                chronicum_id = "\x00"  # no store holds such an ID: read the rest only
        view = store.read_state(owner_id, namespace, chronicum_id, query)
        return view

    def list_namespace(self, namespace: str, *, owner_id: str | None = None) -> NamespaceListing:
        """The chronica whose state is in ``namespace`` (only ``owner_id``'s when given),
        oldest activity first, each with its state; the owner states of their owners;
        the namespace state.

        Without ``owner_id`` this lists every owner's chronica of the namespace, as an
        agent framework's app-wide listing must (ADK's ``list_sessions`` without a
        user): call it only from the app's own code, never with a namespace a caller
        chose, and never to answer a request that only one owner's credentials made.
        """
        check_identifier("namespace", namespace)
        if owner_id is not None:
            check_owner(owner_id)
        self._admit(owner_id, action="list")
        store = self._require(self._states, "keep state (it is not a StateStore)")
        listing = store.list_namespace(namespace, owner_id)
        identity = self.identity
        if isinstance(identity, AgentIdentity) and identity.chronica is not None:
            kept = [(c, s) for c, s in listing.chronica if identity.allows(c.id)]
            listing = dataclasses.replace(listing, chronica=kept)
        return listing

    aupdate_state = async_twin(update_state)
    aget_state = async_twin(get_state)
    alist_namespace = async_twin(list_namespace)
