"""PydanticAI conversations kept in chronica: ``ChronicaConversationStore``.

``pip install "chronica[pydantic-ai]"``, then use it like PydanticAI's own
``InMemoryConversationStore``::

    store = ChronicaConversationStore()
    conversation = await store.load(conversation_id, scope=owner_id) or Conversation(
        conversation_id=conversation_id
    )
    result = await agent.run(prompt, conversation=conversation)
    await store.save(result, scope=owner_id)

A conversation is the chronicum of the same ID, owned by its ``scope`` (a conversation
saved without one belongs to ``unscoped_owner_id``). Each message is one actum of it,
recorded through ``chronica.services``: its kind and actor from the message's parts,
``call_id`` from its tool call, ``content`` the text people read, ``data`` the message
as PydanticAI serialises it. The conversation's record (head, revision, branches,
usage) and its entries (which actum holds each message, and the entry before it) live
in two side tables in the same database, written in the same transaction as the acta.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async
from pydantic import TypeAdapter
from pydantic_ai.conversation_store import (
    ConversationConflict,
    ConversationEntry,
    ConversationRecord,
    ConversationStore,
)
from pydantic_ai.messages import (
    ModelMessagesTypeAdapter,
)

from chronica import (
    Actum,
    ChronicumExists,
    ChronicumNotFound,
    InvalidActum,
    InvalidQuery,
    services,
)

from .messages import actum_of, agent_name, identifier, message_of

if TYPE_CHECKING:
    from pydantic_ai import Agent

    from .records import ConversationChain, Records

__all__ = ["ChronicaConversationStore"]

_RECORDS: TypeAdapter[ConversationRecord] = TypeAdapter(ConversationRecord)
# The conversation whose record this task read last. PydanticAI asks for a history by
# its newest entry alone, and a fork holds copies of its source's entries under the
# same IDs: the copy in the conversation being read is the one to follow.
_reading: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "chronica_pydantic_ai_reading", default=None
)


class ChronicaConversationStore(ConversationStore):
    """A PydanticAI ``ConversationStore`` on chronica's configured store.

    ``scope`` is chronica's owner: a conversation saved with a scope is a chronicum of
    that owner, and ``scope=`` on a read keeps a conversation to its owner as PydanticAI
    does. A conversation saved without a scope belongs to ``unscoped_owner_id``.

    Its records live in the tables of the Django app ``chronica.integrations.pydantic_ai``
    (add it to ``INSTALLED_APPS``), on the database of the acta: the record and the acta
    are written in one transaction. Where it differs from
    ``InMemoryConversationStore`` (forks copy, delete erases, what chronica refuses),
    see the README.

    ``identity``: where the store runs in an agent service, the agent's credential
    (``services.authenticate_credential(secret)``). Every call then keeps its rules:
    the model's messages and tool results are written as the credential's actor (with
    its actor kind; the model's name stays in ``data``), a user prompt is the person's
    and is ``NotPermitted`` (nothing of the save is written), only the credential's
    owner's conversations are read or written (others read as missing, and saving one
    raises ``ChronicumNotFound``), listing and deleting only if the credential allows
    them, and every actum written is attested (``recorded_by``). A conversation saved
    without a scope then belongs to the credential's owner.

    ``agent``: the PydanticAI ``Agent`` (or its name) whose messages the store saves: the
    actor of the model's messages is the agent's ``name``, else the model's name.
    ``user_actor``: the actor of user prompts (default: the scope, the owner; ``"user"``
    in an unscoped conversation).
    """

    def __init__(
        self,
        *,
        unscoped_owner_id: str | None = None,
        identity: services.Identity | None = None,
        agent: Agent[Any, Any] | str | None = None,
        user_actor: str | None = None,
    ) -> None:
        if unscoped_owner_id is None:
            unscoped_owner_id = "pydantic-ai" if identity is None else identity.owner_id
        _check_owner("unscoped_owner_id", unscoped_owner_id)
        self.unscoped_owner_id = unscoped_owner_id
        self.identity = identity
        self.agent = agent
        self.user_actor = user_actor

    def __repr__(self) -> str:
        return f"<ChronicaConversationStore unscoped_owner_id={self.unscoped_owner_id!r}>"

    @property
    def _calls(self) -> Any:
        # The configured Chronicarius, acting as the identity if there is one.
        return services if self.identity is None else services.acting_as(self.identity)

    @property
    def _agent(self) -> services.AgentIdentity | None:
        identity = self.identity
        return identity if isinstance(identity, services.AgentIdentity) else None

    # -- the storage primitives PydanticAI builds on ------------------------------

    async def read_record(self, conversation_id: str) -> ConversationRecord | None:
        _reading.set(conversation_id)
        return await sync_to_async(self._load_record)(conversation_id)

    async def read_records(
        self, *, scope: str | None = None, limit: int | None = None
    ) -> Sequence[ConversationRecord]:
        return await sync_to_async(self._load_records)(scope, limit)

    async def write_record(
        self,
        record: ConversationRecord,
        *,
        new_entries: Sequence[ConversationEntry] = (),
        expected_revision: str | None,
    ) -> None:
        await sync_to_async(self._store_record)(record, list(new_entries), expected_revision)

    async def delete_record(self, conversation_id: str, *, expected_revision: str) -> None:
        await sync_to_async(self._drop_record)(conversation_id, expected_revision)

    async def read_entry(self, entry_id: str) -> ConversationEntry:
        entries = await sync_to_async(self._entries_to)(entry_id, 1, _reading.get())
        if not entries:
            raise KeyError(entry_id)
        return entries[0]

    async def read_history(
        self, head_id: str | None, *, limit: int | None = None
    ) -> list[ConversationEntry]:
        """The entries up to ``head_id``, oldest first (the last ``limit``): one query
        for the chain of entries, one window of acta for the messages."""
        if head_id is None or limit == 0:
            return []
        return await sync_to_async(self._entries_to)(head_id, limit, _reading.get())

    # -- reading -------------------------------------------------------------------

    def _load_record(self, conversation_id: str) -> ConversationRecord | None:
        if identifier(conversation_id, "") != conversation_id:
            return None  # no conversation has an ID no database keeps
        stored = _records().record(conversation_id)
        if stored is None:
            return None
        record = _RECORDS.validate_python(stored)
        if self.identity is not None:
            # Another owner's conversation, or one the credential does not name, reads
            # as missing, as a chronicum does.
            try:
                self._calls.get_chronicum(self._owner(record.scope), conversation_id)
            except ChronicumNotFound:
                return None
        return record

    def _load_records(self, scope: str | None, limit: int | None) -> list[ConversationRecord]:
        if scope is not None:
            _check_owner("scope", scope, InvalidQuery)
        if self.identity is not None:
            # Listing is the owner's (NotPermitted for an agent whose credential does
            # not allow it), and only the identity's owner's.
            self._calls.list_chronica(self._owner(scope), limit=1)
        stored = _records().records(scope, limit)
        return [_RECORDS.validate_python(record) for record in stored]

    def _entries_to(
        self, head_id: str, limit: int | None, prefer: str | None
    ) -> list[ConversationEntry]:
        chain = self._chain(head_id, limit, prefer)
        if chain is None:
            raise KeyError(head_id)
        acta = self._acta_of(chain)
        if all(_holds_message(actum) for actum in acta):
            messages = ModelMessagesTypeAdapter.validate_python([actum.data for actum in acta])
        else:
            # A redacted actum holds no message any more: the empty one of its speaker.
            messages = [message_of(actum) for actum in acta]
        return [
            ConversationEntry(id=link.entry_id, parent_id=link.parent_id, message=message)
            for link, message in zip(chain.links, messages, strict=True)
        ]

    def _chain(
        self, head_id: str, limit: int | None, prefer: str | None
    ) -> ConversationChain | None:
        """The entries up to ``head_id`` (the last ``limit``), in one query."""
        return _records().chain(head_id, limit, prefer)

    def _acta_of(self, chain: ConversationChain) -> list[Actum]:
        """The acta holding the chain's messages, oldest first.

        The chain's acta are in write order, but other acta may sit between them:
        branches the conversation left, acta recorded into the chronicum by others.
        Each window ends at the actum written after the newest link still wanted, so
        a linear conversation takes one window of exactly its chain.
        """
        links = chain.links
        found: list[Actum | None] = [None] * len(links)
        wanted = len(links) - 1
        before, size = chain.after, len(links)
        while wanted >= 0:
            try:
                window = self._calls.get_acta(
                    chain.owner_id, chain.conversation_id, last_n=size, before=before
                )
            except InvalidQuery:
                window = []  # the actum to read before is gone (popped)
            except ChronicumNotFound:
                if self.identity is None:
                    raise
                # Not the identity's to read: missing, as another owner's entry is.
                raise KeyError(links[wanted].entry_id) from None
            if not window:
                raise KeyError(links[wanted].entry_id)
            matched = False
            for actum in reversed(window):
                if wanted >= 0 and actum.id == links[wanted].actum_id:
                    found[wanted] = actum
                    wanted -= 1
                    matched = True
            if wanted < 0:
                break
            if matched:
                # Jump over what lies between (a branch left, say) to the next link.
                before = self._next_actum(chain.conversation_id, links[wanted].seq)
                size = wanted + 1
            else:
                # Only acta the conversation did not write: page back past them.
                before, size = window[0].id, max(size * 2, 100)
        return [actum for actum in found if actum is not None]

    def _next_actum(self, conversation_id: str, seq: int) -> str | None:
        return _records().next_actum(conversation_id, seq)

    # -- writing -------------------------------------------------------------------

    def _owner(self, scope: str | None) -> str:
        return self.unscoped_owner_id if scope is None else scope

    def _store_record(
        self,
        record: ConversationRecord,
        new_entries: list[ConversationEntry],
        expected_revision: str | None,
    ) -> None:
        conversation_id = record.conversation_id
        _check_owner("conversation_id", conversation_id)
        if record.scope is not None:
            _check_owner("scope", record.scope)
        stored = _RECORDS.dump_python(record, mode="json")
        human = self.user_actor or record.scope or "user"
        name = agent_name(self.agent)
        acta = [
            actum_of(e.message, conversation_id, human, self._agent, agent_name=name)
            for e in new_entries
        ]
        records = _records()
        records.in_transaction(
            lambda: self._write(records, record, stored, new_entries, acta, expected_revision)
        )

    def _write(
        self,
        records: Records,
        record: ConversationRecord,
        stored: Any,
        new_entries: list[ConversationEntry],
        acta: list[Actum],
        expected_revision: str | None,
    ) -> None:
        conversation_id = record.conversation_id
        # Every path starts with a write: the revision check takes the row's lock (on
        # SQLite the database's write lock) before anything is read, so two writers of
        # one revision queue, and the second finds the revision changed.
        owner_id: str | None
        if expected_revision is None:
            owner_id = self._owner(record.scope)
            created = records.create(
                conversation_id,
                owner_id=owner_id,
                scope=record.scope,
                revision=record.revision,
                updated_at=record.updated_at,
                record=stored,
            )
            if not created:
                raise ConversationConflict(conversation_id)
            self._claim_chronicum(owner_id, conversation_id)
        else:
            owner_id = records.update(
                conversation_id,
                expected_revision=expected_revision,
                scope=record.scope,
                revision=record.revision,
                updated_at=record.updated_at,
                record=stored,
            )
            if owner_id is None:
                raise ConversationConflict(conversation_id)
        if new_entries:
            links = [(e.id, e.parent_id) for e in new_entries]
            self._append(records, owner_id, conversation_id, links, acta)
        head_id = record.head_id
        if (
            head_id is not None
            and not any(e.id == head_id for e in new_entries)
            and not records.has_entry(conversation_id, head_id)
        ):
            self._copy_history(records, owner_id, record)

    def _claim_chronicum(self, owner_id: str, conversation_id: str) -> None:
        """The conversation's chronicum: created for ``owner_id``, or already theirs."""
        try:
            self._calls.create_chronicum(owner_id, conversation_id)
        except ChronicumExists:
            try:
                self._calls.get_chronicum(owner_id, conversation_id)
            except ChronicumNotFound:
                # Someone else's chronicum: the ID is taken, as for any conversation.
                raise ConversationConflict(conversation_id) from None

    def _append(
        self,
        records: Records,
        owner_id: str,
        conversation_id: str,
        links: list[tuple[str, str | None]],
        acta: list[Actum],
    ) -> None:
        """Record ``acta`` and the entries ``links`` (entry ID, parent ID) they hold."""
        try:
            stored = self._calls.record_acta(owner_id, acta)
        except ChronicumNotFound:
            # The chronicum was deleted and taken by another owner since the record was.
            raise ConversationConflict(conversation_id) from None
        records.add_entries(
            conversation_id,
            [
                (entry_id, parent_id, actum.id)
                for (entry_id, parent_id), actum in zip(links, stored, strict=True)
            ],
        )

    def _copy_history(self, records: Records, owner_id: str, record: ConversationRecord) -> None:
        """A fork: copy the history it keeps, entry IDs and all, into its own chronicum."""
        assert record.head_id is not None
        chain = self._chain(record.head_id, None, record.forked_from)
        if chain is None:
            # The entry went with a conversation deleted meanwhile.
            raise ConversationConflict(record.conversation_id)
        try:
            acta = self._acta_of(chain)
        except LookupError:
            raise ConversationConflict(record.conversation_id) from None
        copies = [
            dataclasses.replace(
                actum,
                chronicum_id=record.conversation_id,
                id="",
                at=None,
                redacted=None,
                # (a message is never empty: a redacted one is copied as one that says so)
                content=actum.content or ("[redacted]" if actum.redacted else ""),
            )
            for actum in acta
        ]
        links = [(link.entry_id, link.parent_id) for link in chain.links]
        self._append(records, owner_id, record.conversation_id, links, copies)

    def _drop_record(self, conversation_id: str, expected_revision: str) -> None:
        records = _records()

        def drop() -> None:
            owner_id = records.take(conversation_id, expected_revision)
            if owner_id is None:
                raise ConversationConflict(conversation_id)
            # Gone already, or someone else's by now: either way not this conversation's.
            with contextlib.suppress(ChronicumNotFound):
                self._calls.delete_chronicum(owner_id, conversation_id)

        records.in_transaction(drop)


def _check_owner(name: str, value: object, error: type[Exception] = InvalidActum) -> None:
    """Refuse, before any query, a ``value`` no chronica owner or ID can be: no
    database would keep it (a NUL), or chronica's rules refuse it."""
    if not isinstance(value, str):
        raise error(f"{name} must be a str, not {type(value).__name__}")
    if not value:
        raise error(f"{name} is empty: chronica's owner must name someone")
    if identifier(value, "") != value:
        raise error(f"{name} {value!r} is not an ID chronica keeps (control characters, NUL)")


def _records() -> Records:
    """The records of this app's tables (imported here: the models load with the app)."""
    from django.apps import apps

    if not apps.is_installed("chronica.integrations.pydantic_ai"):
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(
            "ChronicaConversationStore keeps its records in the tables of the app"
            " 'chronica.integrations.pydantic_ai': add it to INSTALLED_APPS and migrate"
        )
    from chronica.stores.db import DjangoStore

    store = services.get_chronicarius().store
    if not isinstance(store, DjangoStore):
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(
            "ChronicaConversationStore writes a conversation's record and its acta in one"
            " database transaction: CHRONICA['STORE'] must be a store on a Django database"
            f" (chronica.stores.db.DjangoStore), not {type(store).__name__}"
        )
    from .records import Records

    return Records()


def _holds_message(actum: Actum) -> bool:
    data = actum.data
    return isinstance(data, dict) and data.get("kind") in ("request", "response")
