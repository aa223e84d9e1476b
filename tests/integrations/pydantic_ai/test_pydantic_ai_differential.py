"""chronica against PydanticAI's own InMemoryConversationStore, step by step.

Hypothesis writes random sequences of save, load (with limits), continue, rewrite,
branch, fork, list and delete over a few conversations and scopes; each step runs on
both stores and must give the same result: the same messages, records, entries (by
the order they were stored: the IDs are minted apart) and the same errors.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai.conversation import Conversation
from pydantic_ai.conversation_store import (
    ConversationConflict,
    ConversationEntry,
    ConversationRecord,
    ConversationStore,
    InMemoryConversationStore,
)
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from chronica.integrations.pydantic_ai import ChronicaConversationStore

from .scenario import run

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

FRIDAY = dt.datetime(2026, 11, 27, 19, 0, tzinfo=dt.UTC)
IDS = ["dinner-friday", "dinner-saturday"]
FORK = "dinner-plan-b"
SCOPES = [None, "ardian", "rafa"]
LIMITS = [None, 0, 1, 2, 5]
SLOTS = 3

# Few distinct texts: the same message often comes back, as in real conversations,
# and a rewritten history shares a prefix with the stored one.
texts = st.sampled_from(["Rumah Teduh.", "Kayu Manis.", "For four at 7pm?", "Yes."]) | st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"], exclude_characters="\x00"),
    max_size=12,
)


@st.composite
def messages(draw: st.DrawFn) -> list[Any]:
    """A turn: ardian's prompt, or the agent's text, thought or tool call and its return."""
    text = draw(texts)
    kind = draw(st.sampled_from(["ask", "say", "think", "tool"]))
    if kind == "ask":
        return [ModelRequest(parts=[UserPromptPart(text, timestamp=FRIDAY)], timestamp=FRIDAY)]
    if kind == "say":
        return [ModelResponse(parts=[TextPart(text)], model_name="concierge", timestamp=FRIDAY)]
    if kind == "think":
        return [ModelResponse(parts=[ThinkingPart(text)], model_name="concierge", timestamp=FRIDAY)]
    call = f"search-{draw(st.integers(1, 3))}"
    return [
        ModelResponse(
            parts=[ToolCallPart("search", {"area": text}, tool_call_id=call)],
            model_name="search",
            timestamp=FRIDAY,
        ),
        ModelRequest(
            parts=[ToolReturnPart("search", [text], tool_call_id=call, timestamp=FRIDAY)],
            timestamp=FRIDAY,
        ),
    ]


turns = st.lists(messages(), max_size=3).map(lambda ts: [m for t in ts for m in t])
some_turns = st.lists(messages(), min_size=1, max_size=3).map(lambda ts: [m for t in ts for m in t])
conversation_ids = st.sampled_from([*IDS, *IDS, FORK])
scopes = st.sampled_from(SCOPES)
# A read names no scope more often than not, so that most reads find something.
read_scopes = st.sampled_from([None, None, *SCOPES])
limits = st.sampled_from(LIMITS)
slots = st.integers(0, SLOTS - 1)
# A point in a history: `at` a number of messages, or `from_entry` the n-th entry stored.
points = st.one_of(
    st.tuples(st.just("at"), st.integers(0, 5)),
    st.tuples(st.just("from_entry"), st.integers(0, 8)),
)

steps = st.one_of(
    st.tuples(st.just("save_new"), conversation_ids, scopes, turns),
    st.tuples(st.just("load"), slots, conversation_ids, read_scopes, limits),
    st.tuples(st.just("continue"), slots, conversation_ids, limits, some_turns, read_scopes),
    st.tuples(st.just("rewrite"), slots, conversation_ids, st.integers(0, 6), turns),
    st.tuples(st.just("load_entries"), conversation_ids, read_scopes, limits),
    st.tuples(st.just("branch"), conversation_ids, points, st.booleans(), slots, read_scopes),
    st.tuples(
        st.just("fork"),
        conversation_ids,
        st.none() | points,
        st.sampled_from([FORK, FORK, FORK, *IDS]),
        read_scopes,
        read_scopes,
    ),
    st.tuples(st.just("list"), read_scopes, st.none() | st.integers(0, 4)),
    st.tuples(st.just("delete"), conversation_ids, read_scopes),
)


@dataclass
class Side:
    """One store, the conversations its caller holds, and its entry IDs by the order
    they were stored (the two stores mint different IDs for the same entry)."""

    store: ConversationStore
    held: dict[int, Conversation] = field(default_factory=dict)
    labels: dict[str, int] = field(default_factory=dict)
    ids: list[str] = field(default_factory=list)

    def stored(self, entries: list[ConversationEntry]) -> list[int]:
        for entry in entries:
            self.labels[entry.id] = len(self.ids)
            self.ids.append(entry.id)
        return [self.labels[entry.id] for entry in entries]

    def label(self, entry_id: str | None) -> Any:
        return None if entry_id is None else self.labels.get(entry_id, f"unknown {entry_id}")

    def entry(self, n: int) -> str:
        return self.ids[n] if n < len(self.ids) else "never-stored"

    def conversation(self, conversation: Conversation | None) -> Any:
        if conversation is None:
            return None
        return (
            conversation.conversation_id,
            conversation.messages,
            conversation.usage,
            conversation.deferred_tool_requests,
            conversation.revision is not None,
            conversation.new_message_index,
        )

    def record(self, record: ConversationRecord) -> Any:
        return (
            record.conversation_id,
            self.label(record.head_id),
            record.usage,
            record.scope,
            record.forked_from,
            self.label(record.forked_at),
            [self.label(tip) for tip in record.branches],
        )

    def point(self, point: tuple[str, int] | None) -> dict[str, Any]:
        if point is None:
            return {}
        name, value = point
        return {"at": value} if name == "at" else {"from_entry": self.entry(value)}

    def step(self, step: tuple[Any, ...]) -> Any:
        """Take one step; what it returned (made comparable) or the error it raised."""
        try:
            return self._step(*step)
        except ConversationConflict as conflict:
            return ("ConversationConflict", conflict.conversation_id)
        except Exception as error:  # compared by type: a message may name an ID
            return (type(error).__name__,)

    def _step(self, name: str, *args: Any) -> Any:
        store = self.store
        if name == "save_new":
            conversation_id, scope, messages = args
            conversation = Conversation(messages=list(messages), conversation_id=conversation_id)
            return self.stored(run(store.save)(conversation, scope=scope))
        if name == "load":
            slot, conversation_id, scope, limit = args
            loaded = run(store.load)(conversation_id, scope=scope, limit=limit)
            if loaded is not None:
                self.held[slot] = loaded
            return self.conversation(loaded)
        if name == "continue":
            slot, conversation_id, limit, messages, scope = args
            if slot not in self.held:
                self._step("load", slot, conversation_id, None, limit)
            if slot not in self.held:
                return "nothing held"
            conversation = self.held[slot]
            conversation.messages.extend(messages)
            return self.stored(run(store.save)(conversation, scope=scope))
        if name == "rewrite":
            slot, conversation_id, keep, messages = args
            if slot not in self.held:
                self._step("load", slot, conversation_id, None, None)
            if slot not in self.held:
                return "nothing held"
            held = self.held[slot]
            # As if serialised and read back: compared with the stored history.
            rewritten = Conversation(
                messages=[*held.messages[:keep], *messages],
                conversation_id=held.conversation_id,
                revision=held.revision,
                usage=held.usage,
            )
            self.held[slot] = rewritten
            return self.stored(run(store.save)(rewritten))
        if name == "load_entries":
            conversation_id, scope, limit = args
            entries = run(store.load_entries)(conversation_id, scope=scope, limit=limit)
            if entries is None:
                return None
            return [(self.label(e.id), self.label(e.parent_id), e.message) for e in entries]
        if name == "branch":
            conversation_id, point, held_revision, slot, scope = args
            if held_revision and slot in self.held:
                revision = self.held[slot].revision
            else:
                current = run(store.read_record)(conversation_id)
                revision = None if current is None else current.revision
            branched = run(store.branch)(
                conversation_id, expected_revision=revision, scope=scope, **self.point(point)
            )
            self.held[slot] = branched
            return self.conversation(branched)
        if name == "fork":
            conversation_id, point, new_id, scope, source_scope = args
            fork = run(store.fork)(
                conversation_id,
                new_conversation_id=new_id,
                scope=scope,
                source_scope=source_scope,
                **self.point(point),
            )
            return self.conversation(fork)
        if name == "list":
            scope, limit = args
            return [self.record(r) for r in run(store.list_conversations)(scope=scope, limit=limit)]
        if name == "delete":
            conversation_id, scope = args
            return run(store.delete)(conversation_id, scope=scope)
        raise AssertionError(name)


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    st.lists(
        st.tuples(st.just("save_new"), st.sampled_from(IDS), scopes, some_turns),
        min_size=1,
        max_size=2,
    ),
    st.lists(steps, min_size=1, max_size=20),
)
def test_chronica_does_what_the_in_memory_store_does(
    first: list[tuple[Any, ...]], then: list[tuple[Any, ...]]
) -> None:
    sequence = first + then
    reference = Side(InMemoryConversationStore())
    chronica = Side(ChronicaConversationStore())
    with transaction.atomic():  # each example starts from an empty database
        for number, step in enumerate(sequence):
            expected = reference.step(step)
            got = chronica.step(step)
            assert got == expected, f"step {number} {step[0]}: {got!r} != {expected!r}"
        # And in the end, every conversation the same, whole.
        for conversation_id in [*IDS, FORK]:
            assert chronica.step(("load", 0, conversation_id, None, None)) == reference.step(
                ("load", 0, conversation_id, None, None)
            )
        transaction.set_rollback(True)
