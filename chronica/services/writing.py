"""Writing: one actum, a batch, with a key, with state; owner-checked where it appends."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence

from ..errors import ChronicumNotFound, IdempotencyUnsupported, NotPermitted, StoreUnsupported
from ..signals import actum_recorded
from ..validation.acta import check_batch, check_state_changes, check_token_count, normalize_key
from ..validation.identifiers import check_owner
from ..values import ActorKind, Actum, Recorded, RecordedActa, StateChange
from .base import ChronicariusBase, Write, async_twin, send
from .identity import AgentIdentity

__all__ = ["Writing"]

# A write that finds its chronicum deleted under it creates it again and retries;
# only a delete after every one of these attempts lets ChronicumNotFound through.
_WRITE_ATTEMPTS = 5


class Writing(ChronicariusBase):
    """Recording acta: validated first, owner-checked where they append, announced
    after the commit."""

    def record_acta(
        self,
        owner_id: str,
        acta: Sequence[Actum],
        *,
        idempotency_key: str | None = None,
        state: Sequence[StateChange] = (),
    ) -> RecordedActa:
        """Record ``acta``, a batch into one chronicum, for ``owner_id``, and return them
        as stored: a list whose ``replayed`` tells a replay.

        Every actum is validated before anything is written (``InvalidActum``); they
        land all or none, one after the other with no other actum between them. The
        chronicum is created for ``owner_id`` by its first write (with ``auto_create``
        off, a missing one is ``ChronicumNotFound``, as someone else's is); every actum
        gets a new ID. With an ``idempotency_key`` already used in that chronicum,
        nothing is written and the acta stored the first time come back, with
        ``replayed`` true. An empty batch writes and creates nothing.

        ``state``: changes to state documents (``StateChange``) made in the same
        transaction as the acta, and not at all on a replay; an ``expect`` that does
        not hold is ``StateConflict`` with nothing written (the store needs
        ``supports_state``). A write with state never creates its chronicum.
        """
        write = self._prepare(owner_id, acta, idempotency_key, state)
        if write is None:
            return RecordedActa()
        recorded = self._write(owner_id, write)
        return RecordedActa(recorded.acta, replayed=recorded.replayed)

    def record_actum(
        self, owner_id: str, actum: Actum, *, idempotency_key: str | None = None
    ) -> Actum:
        """Record one actum and return it as stored (see :meth:`record_acta`). With a key
        already used in the chronicum, the actum stored the first time comes back."""
        return self.record_acta(owner_id, [actum], idempotency_key=idempotency_key)[0]

    def record(
        self,
        owner_id: str,
        acta: Sequence[Actum],
        *,
        idempotency_key: str | None = None,
        state: Sequence[StateChange] = (),
    ) -> Recorded:
        """Deprecated: :meth:`record_acta`, whose list tells a replay by ``replayed``."""
        warnings.warn(
            "Chronicarius.record() is deprecated: call record_acta(), which takes state="
            " and whose answer has .replayed",
            DeprecationWarning,
            stacklevel=2,
        )
        stored = self.record_acta(owner_id, acta, idempotency_key=idempotency_key, state=state)
        return Recorded(list(stored), replayed=stored.replayed)

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
            self._require(self._states, "keep state", "supports_state")
        if not batch:
            return None
        if key is not None and not self._idempotent:
            raise IdempotencyUnsupported(
                f"{type(self.store).__name__} does not implement IdempotentStore"
                " (record_idempotent) or supports_append"
            )
        if len(batch) > 1 and not self._appends:
            raise StoreUnsupported(
                f"{type(self.store).__name__} cannot record a batch (supports_append)"
            )
        recorded_by = self._recorded_by
        to_store = [
            dataclasses.replace(
                actum, id=self.id_factory(), at=None, recorded_by=recorded_by, compacts=""
            )
            for actum in batch
        ]
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
            # A value that is no actor kind at all is left to check_batch: bad input, not
            # a kind the credential lacks.
            if isinstance(kind, ActorKind) and kind not in identity.actor_kinds:
                allowed = ", ".join(sorted(k.value for k in identity.actor_kinds))
                raise NotPermitted(
                    f"the credential of {identity.actor!r} ({identity.key_id}) writes only"
                    f" with actor_kind {allowed}, not {kind.value!r}",
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
        chronicum_id = write.chronicum_id
        if self._appends:
            # A write with state never creates its chronicum: the state it changes is
            # a chronicum's that someone created (update_state(create=True)).
            create = "missing" if self.auto_create and not write.changes else None
            recorded = self.store.append(  # type: ignore[attr-defined]
                owner_id,
                chronicum_id,
                write.acta,
                key=write.key,
                tokens=write.tokens,
                state=write.changes,
                create=create,
                credential=(
                    self.identity.key_id if isinstance(self.identity, AgentIdentity) else None
                ),
            )
            if recorded is None:
                raise ChronicumNotFound(chronicum_id)
            return self._announce(owner_id, recorded)
        # A store of the seed's four methods: the owner checked with get, then the
        # record. Chronicarius deletes nothing through such a store, so the owner get
        # saw stays the owner; a delete behind chronica's back makes the next attempt
        # create the chronicum again.
        for _attempt in range(_WRITE_ATTEMPTS):
            self._own(owner_id, chronicum_id, create=self.auto_create)
            try:
                recorded = self._record_one(write.acta, write.key)
            except ChronicumNotFound:
                continue
            return self._announce(owner_id, recorded)
        raise ChronicumNotFound(chronicum_id)

    def _record_one(self, acta: list[Actum], key: str | None) -> Recorded:
        (actum,) = acta
        if key is None:
            return Recorded([self.store.record(actum)])
        stored = self.store.record_idempotent(actum, key)  # type: ignore[attr-defined]
        # A store with only the seed's methods tells a replay by the ID it returns.
        return Recorded([stored], replayed=stored.id != actum.id)

    def _announce(self, owner_id: str, recorded: Recorded) -> Recorded:
        if not recorded.replayed and actum_recorded.has_listeners():
            acta = recorded.acta

            def announce() -> None:
                for actum in acta:
                    send(actum_recorded, self.signal_sender, owner_id=owner_id, actum=actum)

            self._after_commit(announce)
        return recorded

    arecord_actum = async_twin(record_actum)
    arecord_acta = async_twin(record_acta)

    async def arecord(
        self,
        owner_id: str,
        acta: Sequence[Actum],
        *,
        idempotency_key: str | None = None,
        state: Sequence[StateChange] = (),
    ) -> Recorded:
        """Deprecated: :meth:`arecord_acta`."""
        warnings.warn(
            "Chronicarius.arecord() is deprecated: call arecord_acta(), which takes state="
            " and whose answer has .replayed",
            DeprecationWarning,
            stacklevel=2,
        )
        stored = await self.arecord_acta(
            owner_id, acta, idempotency_key=idempotency_key, state=state
        )
        return Recorded(list(stored), replayed=stored.replayed)
