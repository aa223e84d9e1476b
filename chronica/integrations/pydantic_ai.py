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
from collections.abc import Iterable, Sequence
from typing import Any

from asgiref.sync import sync_to_async
from pydantic import TypeAdapter
from pydantic_ai.conversation_store import (
    ConversationConflict,
    ConversationEntry,
    ConversationRecord,
    ConversationStore,
)
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from .. import services
from ..errors import ChronicumExists, ChronicumNotFound, InvalidActum, InvalidQuery
from ..interfaces import ConversationChain, ConversationRecordStore
from ..validation import check_chronicum_id, check_identifier
from ..values import ActorKind, Actum, ActumKind
from . import pydantic_ai_records  # noqa: F401  (connects the receiver of deletes)

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

    It needs ``chronica.stores.db.DjangoStore`` (the default store): the record and the
    acta are written in one transaction of its database. Where it differs from
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
    """

    def __init__(
        self,
        *,
        unscoped_owner_id: str | None = None,
        identity: services.Identity | None = None,
    ) -> None:
        if unscoped_owner_id is None:
            unscoped_owner_id = "pydantic-ai" if identity is None else identity.owner_id
        check_identifier("unscoped_owner_id", unscoped_owner_id)
        if not unscoped_owner_id:
            raise ValueError("unscoped_owner_id is empty")
        self.unscoped_owner_id = unscoped_owner_id
        self.identity = identity

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
        stored = services.conversation_records().record(conversation_id)
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
        if self.identity is not None:
            # Listing is the owner's (NotPermitted for an agent whose credential does
            # not allow it), and only the identity's owner's.
            self._calls.list_chronica(self._owner(scope), limit=1)
        stored = services.conversation_records().records(scope, limit)
        return [_RECORDS.validate_python(record) for record in stored]

    def _entries_to(
        self, head_id: str, limit: int | None, prefer: str | None
    ) -> list[ConversationEntry]:
        chain = self._chain(head_id, limit, prefer)
        if chain is None:
            raise KeyError(head_id)
        acta = self._acta_of(chain)
        messages = ModelMessagesTypeAdapter.validate_python([actum.data for actum in acta])
        return [
            ConversationEntry(id=link.entry_id, parent_id=link.parent_id, message=message)
            for link, message in zip(chain.links, messages, strict=True)
        ]

    def _chain(
        self, head_id: str, limit: int | None, prefer: str | None
    ) -> ConversationChain | None:
        """The entries up to ``head_id`` (the last ``limit``), in one query."""
        return services.conversation_records().chain(head_id, limit, prefer)

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
        return services.conversation_records().next_actum(conversation_id, seq)

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
        check_chronicum_id(conversation_id)
        if record.scope is not None:
            check_identifier("scope", record.scope)
            if not record.scope:
                raise InvalidActum("scope is empty: chronica's owner must name someone")
        stored = _RECORDS.dump_python(record, mode="json")
        human = record.scope or "user"
        acta = [actum_of(e.message, conversation_id, human, self._agent) for e in new_entries]
        records = services.conversation_records()
        records.in_transaction(
            lambda: self._write(records, record, stored, new_entries, acta, expected_revision)
        )

    def _write(
        self,
        records: ConversationRecordStore,
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
        records: ConversationRecordStore,
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

    def _copy_history(
        self, records: ConversationRecordStore, owner_id: str, record: ConversationRecord
    ) -> None:
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
            dataclasses.replace(actum, chronicum_id=record.conversation_id, id="", at=None)
            for actum in acta
        ]
        links = [(link.entry_id, link.parent_id) for link in chain.links]
        self._append(records, owner_id, record.conversation_id, links, copies)

    def _drop_record(self, conversation_id: str, expected_revision: str) -> None:
        records = services.conversation_records()

        def drop() -> None:
            owner_id = records.take(conversation_id, expected_revision)
            if owner_id is None:
                raise ConversationConflict(conversation_id)
            # Gone already, or someone else's by now: either way not this conversation's.
            with contextlib.suppress(ChronicumNotFound):
                self._calls.delete_chronicum(owner_id, conversation_id)

        records.in_transaction(drop)


# -- one message, one actum -----------------------------------------------------------


def actum_of(
    message: ModelMessage,
    chronicum_id: str,
    human: str,
    agent: services.AgentIdentity | None = None,
) -> Actum:
    """The actum that holds ``message``: its kind and actor from its parts.

    A tool call makes a tool request and a tool return a tool response (``call_id``
    the first call's ID, so that chronica pairs them); thinking alone is a thought; a
    user prompt is ``human``'s message, other requests the system's, other responses
    the model's. ``data`` is the message as PydanticAI serialises it. Written by an
    ``agent`` (a credential), every message but a user prompt is the agent's own: its
    actor, and its actor kind where the credential has that one (else its default).
    """
    data = ModelMessagesTypeAdapter.dump_python([message], mode="json")[0]
    if isinstance(message, ModelRequest):
        kind, actor_kind, actor, call_id, text = _request(message, human)
    elif isinstance(message, ModelResponse):
        kind, actor_kind, actor, call_id, text = _response(message)
    else:  # pragma: no cover - ModelMessage is a closed union
        raise TypeError(f"not a PydanticAI message: {type(message).__name__}")
    if agent is not None and actor_kind is not ActorKind.HUMAN:
        actor = agent.actor
        if actor_kind not in agent.actor_kinds:
            actor_kind = agent.default_kind
    return Actum(
        chronicum_id=chronicum_id,
        kind=kind,
        actor_kind=actor_kind,
        actor=actor,
        # A message or a thought needs text; a response of files alone has none.
        content=text or f"({message.kind} with no text)",
        call_id=_identifier(call_id, ""),
        data=data,
    )


_Shape = tuple[ActumKind, ActorKind, str, str, str]


def _request(message: ModelRequest, human: str) -> _Shape:
    returns = [part for part in message.parts if isinstance(part, ToolReturnPart)]
    if returns:
        texts = [part.model_response_str() for part in returns]
        actor = _identifier(returns[0].tool_name, "tool")
        call_id = returns[0].tool_call_id
        return ActumKind.TOOL_RESPONSE, ActorKind.SYSTEM, actor, call_id, "\n".join(texts)
    prompts = [part for part in message.parts if isinstance(part, UserPromptPart)]
    if prompts:
        text = "\n".join(_prompt_text(part.content) for part in prompts)
        return ActumKind.MESSAGE, ActorKind.HUMAN, _identifier(human, "user"), "", text
    texts = [part.content for part in message.parts if isinstance(part, SystemPromptPart)]
    return ActumKind.MESSAGE, ActorKind.SYSTEM, "system", "", "\n".join(texts)


def _response(message: ModelResponse) -> _Shape:
    actor = _identifier(message.model_name or "", "agent")
    calls = [part for part in message.parts if isinstance(part, ToolCallPart)]
    if calls:
        text = "\n".join(f"{part.tool_name}({part.args_as_json_str()})" for part in calls)
        return ActumKind.TOOL_REQUEST, ActorKind.AGENT, actor, calls[0].tool_call_id, text
    texts = [part.content for part in message.parts if isinstance(part, TextPart)]
    if not texts:
        thoughts = [part.content for part in message.parts if isinstance(part, ThinkingPart)]
        if thoughts:
            return ActumKind.THOUGHT, ActorKind.AGENT, actor, "", "\n".join(thoughts)
    return ActumKind.MESSAGE, ActorKind.AGENT, actor, "", "\n".join(texts)


def _prompt_text(content: str | Iterable[Any]) -> str:
    if isinstance(content, str):
        return content
    return " ".join(
        item if isinstance(item, str) else f"[{getattr(item, 'kind', type(item).__name__)}]"
        for item in content
    )


def _identifier(value: str, fallback: str) -> str:
    """``value`` if chronica takes it as an actor or a call ID, else ``fallback``."""
    try:
        check_identifier("actor", value)
    except InvalidActum:
        return fallback
    return value or fallback
