"""Writing: one actum, a batch, with a key, with state; owner-checked where it appends."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from asgiref.sync import sync_to_async

from ..errors import ChronicumNotFound, IdempotencyUnsupported, NotPermitted, StoreUnsupported
from ..signals import actum_recorded
from ..validation import (
    check_batch,
    check_owner,
    check_state_changes,
    check_token_count,
    normalize_key,
)
from ..values import Actum, Recorded, StateChange, restamped
from .base import ChronicariusBase, Write, asend, send
from .identity import AgentIdentity

__all__ = ["Writing"]

# A write that finds its chronicum deleted under it creates it again and retries;
# only a delete after every one of these attempts lets ChronicumNotFound through.
_WRITE_ATTEMPTS = 5


class Writing(ChronicariusBase):
    """Recording acta: validated first, owner-checked where they append, announced
    after the commit."""

    def record(
        self,
        owner_id: str,
        acta: Sequence[Actum],
        *,
        idempotency_key: str | None = None,
        state: Sequence[StateChange] = (),
    ) -> Recorded:
        """The one write: record ``acta`` (a batch into one chronicum) for ``owner_id``.

        Every actum is validated before anything is written (``InvalidActum``); they
        land all or none, one after the other with no other actum between them. The
        chronicum is created for ``owner_id`` by its first write (with ``auto_create``
        off, a missing one is ``ChronicumNotFound``, as someone else's is); every
        actum gets a new ID. With an ``idempotency_key`` already used in that chronicum, nothing
        is written and the acta stored the first time come back, with
        ``replayed=True``. An empty batch writes and creates nothing.

        ``state``: changes to state documents (``StateChange``) made in the same
        transaction as the acta, and not at all on a replay; an ``expect`` that does
        not hold is ``StateConflict`` with nothing written. It needs a ``StateStore``.
        """
        write = self._prepare(owner_id, acta, idempotency_key, state)
        return Recorded([]) if write is None else self._write(owner_id, write)

    def _prepare(
        self,
        owner_id: str,
        acta: Sequence[Actum],
        idempotency_key: str | None,
        state: Sequence[StateChange] = (),
    ) -> Write | None:
        """A write checked and ready for the store; ``None`` for an empty batch."""
        check_owner(owner_id)
        key = normalize_key(idempotency_key)
        acta = self._attest(owner_id, acta)
        batch = check_batch(owner_id, acta, key, self.max_actum_bytes)
        changes = check_state_changes(state, self.max_actum_bytes) if state else []
        if changes:
            self._require(self._states, "keep state (it is not a StateStore)")
        if not batch:
            return None
        if key is not None and not self._idempotent:
            raise IdempotencyUnsupported(
                f"{type(self.store).__name__} does not implement IdempotentStore"
            )
        if len(batch) > 1 and self._batch is None:
            raise StoreUnsupported(
                f"{type(self.store).__name__} cannot record a batch (it is not a BatchStore)"
            )
        recorded_by = self._recorded_by
        to_store = [restamped(actum, self.id_factory(), None, recorded_by) for actum in batch]
        tokens = [check_token_count(self.token_counter(actum), actum) for actum in to_store]
        return Write(to_store, key, tokens, to_store[0].chronicum_id, changes)

    def _attest(self, owner_id: str, acta: Sequence[Actum]) -> Sequence[Actum]:
        """The identity's rules for a write: an agent's credential writes only into its
        owner's chronica it names, only as its actor, with one of its actor kinds (an
        actum that leaves ``actor`` or ``actor_kind`` empty gets the credential's);
        anything else is refused before anything is written."""
        identity = self.identity
        if identity is None or isinstance(acta, str | bytes | dict | Actum):
            return acta  # check_batch refuses what is not a list of acta
        try:
            acta = list(acta)  # a generator is read once, here
        except TypeError:
            return acta
        if not isinstance(identity, AgentIdentity):
            for actum in acta:
                if isinstance(actum, Actum) and isinstance(actum.chronicum_id, str):
                    self._admit(owner_id, actum.chronicum_id)
            return acta
        attested = []
        for actum in acta:
            if not isinstance(actum, Actum):
                attested.append(actum)  # check_batch refuses it
                continue
            if isinstance(actum.chronicum_id, str):
                self._admit(owner_id, actum.chronicum_id)
            actor, kind = actum.actor, actum.actor_kind
            if actor in ("", None):
                actor = identity.actor
            if kind in ("", None):
                kind = identity.default_kind
            if actor != identity.actor:
                raise NotPermitted(
                    f"the credential of {identity.actor!r} ({identity.key_id}) writes only"
                    f" as {identity.actor!r}, not as {actor!r}",
                    rule="actor",
                )
            if kind not in identity.actor_kinds:
                allowed = ", ".join(sorted(k.value for k in identity.actor_kinds))
                raise NotPermitted(
                    f"the credential of {identity.actor!r} ({identity.key_id}) writes only"
                    f" with actor_kind {allowed}, not {kind!r}",
                    rule="actor_kind",
                )
            if actor is not actum.actor or kind is not actum.actor_kind:
                actum = dataclasses.replace(actum, actor=actor, actor_kind=kind)
            attested.append(actum)
        return attested

    def _write(self, owner_id: str, write: Write) -> Recorded:
        """Append ``write`` for ``owner_id``, the owner checked in the same step as the
        append: never into a chronicum that another owner created after this call last
        looked (a delete and a re-create can happen between any two statements)."""
        to_store, key, tokens = write.acta, write.key, write.tokens
        chronicum_id = write.chronicum_id
        scoped = self._scoped
        for _attempt in range(_WRITE_ATTEMPTS):
            if write.changes and self._states is not None:
                recorded = self._states.write_state(
                    owner_id, chronicum_id, to_store, key, tokens, write.changes, None
                )
                if recorded is None:
                    # The state it changes is a chronicum's that someone created with
                    # update_state(create=True): a write with state never creates one.
                    raise ChronicumNotFound(chronicum_id)
                return self._announce(owner_id, recorded)
            if scoped is not None:
                recorded = scoped.record_batch_if_owner(owner_id, to_store, key, tokens)
                if recorded is not None:
                    return self._announce(owner_id, recorded)
                # Missing, or someone else's: create it (ChronicumNotFound if it is
                # another owner's, or missing with auto_create off), then append
                # again through the owner-checked write.
                self._own(owner_id, chronicum_id, create=self.auto_create)
                continue
            # A store without the owner-checked write can delete nothing (Chronicarius
            # deletes only through an OwnerScopedStore), so the owner _own saw is the
            # chronicum's owner for good.
            self._own(owner_id, chronicum_id, create=self.auto_create)
            try:
                recorded = self._store_batch(to_store, key, tokens)
            except ChronicumNotFound:
                continue  # gone since _own saw it: the next attempt creates it again
            return self._announce(owner_id, recorded)
        raise ChronicumNotFound(chronicum_id)

    def record_actum(
        self, owner_id: str, actum: Actum, *, idempotency_key: str | None = None
    ) -> Actum:
        """Record one actum and return it as stored (see :meth:`record`). With a key
        already used in the chronicum, the actum stored the first time comes back."""
        return self.record(owner_id, [actum], idempotency_key=idempotency_key).acta[0]

    def record_acta(
        self, owner_id: str, acta: Sequence[Actum], *, idempotency_key: str | None = None
    ) -> list[Actum]:
        """Record a batch and return it as stored (see :meth:`record`): all or none,
        contiguous, in the given order; a keyed replay returns the first batch."""
        return self.record(owner_id, acta, idempotency_key=idempotency_key).acta

    def _store_batch(
        self, acta: list[Actum], key: str | None, tokens: Sequence[int | None]
    ) -> Recorded:
        if self._batch is not None:
            return self._batch.record_batch(acta, key, tokens)
        (actum,) = acta
        if key is None:
            return Recorded([self.store.record(actum)])
        stored = self.store.record_idempotent(actum, key)  # type: ignore[attr-defined]
        # A store with only the original methods tells a replay by the ID it returns.
        return Recorded([stored], replayed=stored.id != actum.id)

    def _announce(self, owner_id: str, recorded: Recorded) -> Recorded:
        if not recorded.replayed and actum_recorded.has_listeners():
            acta = recorded.acta

            def announce() -> None:
                for actum in acta:
                    send(actum_recorded, self.signal_sender, owner_id=owner_id, actum=actum)

            self._after_commit(announce)
        return recorded

    async def arecord(
        self,
        owner_id: str,
        acta: Sequence[Actum],
        *,
        idempotency_key: str | None = None,
        state: Sequence[StateChange] = (),
    ) -> Recorded:
        """Async twin of :meth:`record`."""
        native = self._async_store()
        if native is None or state:
            return await sync_to_async(self.record)(
                owner_id, acta, idempotency_key=idempotency_key, state=state
            )
        write = self._prepare(owner_id, acta, idempotency_key)
        if write is None:
            return Recorded([])
        recorded = await native.arecord_batch_if_owner(
            owner_id, write.acta, write.key, write.tokens
        )
        if recorded is None:
            # A first write, or someone else's chronicum: the long way decides.
            return await sync_to_async(self._write)(owner_id, write)
        if not recorded.replayed and actum_recorded.has_listeners():
            for actum in recorded.acta:
                await asend(actum_recorded, self.signal_sender, owner_id=owner_id, actum=actum)
        return recorded

    async def arecord_actum(
        self, owner_id: str, actum: Actum, *, idempotency_key: str | None = None
    ) -> Actum:
        """Async twin of :meth:`record_actum`."""
        return (await self.arecord(owner_id, [actum], idempotency_key=idempotency_key)).acta[0]

    async def arecord_acta(
        self, owner_id: str, acta: Sequence[Actum], *, idempotency_key: str | None = None
    ) -> list[Actum]:
        """Async twin of :meth:`record_acta`."""
        return (await self.arecord(owner_id, acta, idempotency_key=idempotency_key)).acta
