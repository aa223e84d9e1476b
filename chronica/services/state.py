"""State beside the acta: JSON documents changed in the same transaction as a write."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from typing import Any

from ..errors import ChronicumNotFound
from ..telemetry import FRAMES
from ..validation.acta import check_state_changes
from ..validation.identifiers import check_chronicum_id, check_identifier, check_owner
from ..validation.queries import build_query
from ..values import ActaQuery, NamespaceListing, StateChange, StateView
from .base import ChronicariusBase, async_twin
from .identity import AgentIdentity

__all__ = ["State"]


class State(ChronicariusBase):
    """A chronicum's, an owner's and a namespace's state (a store that ``supports_state``)."""

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
        store = self._require(self._states, "keep state", "supports_state")
        if create:
            check_chronicum_id(chronicum_id)
            self._admit(owner_id, chronicum_id)
        else:
            self._check_ids(owner_id, chronicum_id)
        written = store.append(
            owner_id, chronicum_id, [], state=changes, create="new" if create else None
        )
        if written is None:
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
        store = self._require(self._states, "keep state", "supports_state")
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

    def list_namespace(
        self, owner_id: str | None, namespace: str | None = None, /, **deprecated: Any
    ) -> NamespaceListing:
        """The chronica whose state is in ``namespace`` of ``owner_id``, oldest activity
        first, each with its state; the owner states of their owners; the namespace
        state.

        ``owner_id=None`` lists every owner's chronica of the namespace, as an agent
        framework's app-wide listing must (ADK's ``list_sessions`` without a user):
        pass it only from the app's own code, never with a namespace a caller chose, and
        never to answer a request that only one owner's credentials made.

        (Deprecated: the earlier ``list_namespace(namespace, owner_id=None)``.)
        """
        if namespace is None:
            warnings.warn(
                "list_namespace(namespace, owner_id=...) is deprecated: call"
                " list_namespace(owner_id, namespace), owner_id None for every owner",
                DeprecationWarning,
                stacklevel=2 + FRAMES,  # past chronica.telemetry's span, if any
            )
            namespace, owner_id = owner_id, deprecated.pop("owner_id", None)
        if deprecated:
            raise TypeError(f"list_namespace() got unexpected arguments: {sorted(deprecated)}")
        assert namespace is not None
        self._listing_checks(namespace, owner_id)
        store = self._require(self._states, "keep state", "supports_state")
        return self._listed(store.list_namespace(owner_id, namespace))

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

    aupdate_state = async_twin(update_state)
    aget_state = async_twin(get_state)
    alist_namespace = async_twin(list_namespace)
