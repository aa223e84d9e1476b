"""ChronicaConversationStore: PydanticAI's ConversationStore on chronica.

``TestContract`` holds the promises of PydanticAI's ConversationStore docstrings and
runs them on PydanticAI's own InMemoryConversationStore and on chronica alike: where
the reference passes and chronica fails, chronica is wrong. The other classes are
what chronica adds: the messages are acta of the owner's chronicum.
"""

from __future__ import annotations

import dataclasses

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from pydantic_ai.conversation import Conversation
from pydantic_ai.conversation_store import (
    ConversationConflict,
    ConversationEntry,
    ConversationRecord,
    ConversationStore,
    InMemoryConversationStore,
)
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import (
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.usage import RunUsage

from chronica import (
    ActorKind,
    Actum,
    ActumKind,
    ChronicumNotFound,
    InvalidActum,
    services,
)
from chronica.integrations.pydantic_ai import ChronicaConversationStore
from chronica.integrations.pydantic_ai.models import PydanticAIConversation, PydanticAIEntry

from ... import scenario
from .scenario import (
    CONVERSATION,
    OWNER,
    SEARCH_CALL,
    ask,
    booking_reply,
    run,
    seven,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_chronicarius():
    services.reset_chronicarius()
    yield
    services.reset_chronicarius()


@pytest.fixture(params=["in-memory", "chronica"])
def conversations(request: pytest.FixtureRequest) -> ConversationStore:
    """PydanticAI's reference store and chronica's, for the promises both must keep."""
    if request.param == "in-memory":
        return InMemoryConversationStore()
    return ChronicaConversationStore()


@pytest.fixture
def chronica_store() -> ChronicaConversationStore:
    return ChronicaConversationStore()


def saved(store: ConversationStore, messages, *, scope=OWNER, conversation_id=CONVERSATION):
    """A conversation saved for the first time; returns it as saved."""
    conversation = Conversation(messages=list(messages), conversation_id=conversation_id)
    run(store.save)(conversation, scope=scope)
    return conversation


def texts(conversation: Conversation) -> list[str]:
    return [
        part.content
        for message in conversation.messages
        for part in message.parts
        if isinstance(getattr(part, "content", None), str)
    ]


class TestContract:
    """The docstrings of PydanticAI's ConversationStore, case by case."""

    def test_load_of_a_conversation_the_store_lacks_is_none(self, conversations):
        assert run(conversations.load)(CONVERSATION) is None
        assert run(conversations.load_entries)(CONVERSATION) is None

    def test_messages_come_back_equal_with_revision_and_new_message_index(self, conversations):
        first = saved(conversations, seven())

        loaded = run(conversations.load)(CONVERSATION)

        assert loaded.messages == first.messages
        assert loaded.conversation_id == CONVERSATION
        assert loaded.revision == first.revision is not None
        assert loaded.new_message_index == 7

    def test_limit_loads_the_last_messages_and_a_negative_one_is_refused(self, conversations):
        first = saved(conversations, seven())

        assert run(conversations.load)(CONVERSATION, limit=3).messages == first.messages[-3:]
        assert run(conversations.load)(CONVERSATION, limit=0).messages == []
        assert run(conversations.load)(CONVERSATION, limit=70).messages == first.messages
        entries = run(conversations.load_entries)(CONVERSATION, limit=2)
        assert [e.message for e in entries] == first.messages[-2:]
        assert entries[1].parent_id == entries[0].id
        with pytest.raises(UserError):
            run(conversations.load)(CONVERSATION, limit=-1)

    def test_another_scope_is_a_conversation_the_store_lacks(self, conversations):
        saved(conversations, seven(), scope=OWNER)

        assert run(conversations.load)(CONVERSATION, scope="rafa") is None
        assert run(conversations.load)(CONVERSATION, scope=OWNER) is not None
        assert run(conversations.load)(CONVERSATION) is not None  # no scope: any

    def test_save_returns_the_entries_it_stored_and_nothing_when_nothing_is_new(
        self, conversations
    ):
        conversation = Conversation(messages=seven()[:2], conversation_id=CONVERSATION)

        entries = run(conversations.save)(conversation, scope=OWNER)
        again = run(conversations.save)(conversation)

        assert [e.message for e in entries] == conversation.messages
        assert entries[0].parent_id is None
        assert entries[1].parent_id == entries[0].id
        assert again == []

    def test_a_loaded_conversation_saves_only_the_messages_added_after_it(self, conversations):
        saved(conversations, seven())
        loaded = run(conversations.load)(CONVERSATION, limit=2)
        before = loaded.revision

        reply = booking_reply()
        loaded.messages.append(reply)
        entries = run(conversations.save)(loaded)

        assert [e.message for e in entries] == [reply]
        assert loaded.revision != before
        assert loaded.new_message_index == 3
        whole = run(conversations.load)(CONVERSATION)
        assert len(whole.messages) == 8  # the window's save appended to the whole

    def test_a_save_from_an_old_revision_is_a_conflict(self, conversations):
        saved(conversations, seven())
        ardian = run(conversations.load)(CONVERSATION)
        rafa = run(conversations.load)(CONVERSATION)
        ardian.messages.append(ask("Make it 8pm."))
        run(conversations.save)(ardian)

        rafa.messages.append(ask("Make it 6pm."))
        with pytest.raises(ConversationConflict) as conflict:
            run(conversations.save)(rafa)

        assert conflict.value.conversation_id == CONVERSATION
        assert texts(run(conversations.load)(CONVERSATION, limit=1)) == ["Make it 8pm."]

    def test_a_new_conversation_under_a_taken_id_is_a_conflict(self, conversations):
        saved(conversations, seven())

        with pytest.raises(ConversationConflict):
            saved(conversations, [ask("Hello?")])

    def test_saving_with_another_scope_is_a_conflict(self, conversations):
        saved(conversations, seven(), scope=OWNER)
        loaded = run(conversations.load)(CONVERSATION)
        loaded.messages.append(ask("Hello?"))

        with pytest.raises(ConversationConflict):
            run(conversations.save)(loaded, scope="rafa")

    def test_a_rewritten_history_branches_and_keeps_the_old_one(self, conversations):
        saved(conversations, seven())
        loaded = run(conversations.load)(CONVERSATION)
        old_head = run(conversations.load_entries)(CONVERSATION)[-1].id
        # Serialised and read back: no new_message_index, the messages are compared.
        rewritten = Conversation(
            messages=[*loaded.messages[:5], ask("Kayu Manis, actually.")],
            conversation_id=CONVERSATION,
            revision=loaded.revision,
        )

        entries = run(conversations.save)(rewritten)

        assert len(entries) == 1
        record = run(conversations.read_record)(CONVERSATION)
        assert record.branches == [old_head]
        assert texts(run(conversations.load)(CONVERSATION, limit=1)) == ["Kayu Manis, actually."]
        back = run(conversations.branch)(
            CONVERSATION, from_entry=old_head, expected_revision=record.revision
        )
        assert back.messages == loaded.messages

    def test_branch_at_keeps_that_many_messages_and_the_turn_goes_on_the_branch(
        self, conversations
    ):
        first = saved(conversations, seven())

        branched = run(conversations.branch)(CONVERSATION, at=5, expected_revision=first.revision)
        branched.messages.append(ask("Kayu Manis."))
        run(conversations.save)(branched)

        loaded = run(conversations.load)(CONVERSATION)
        assert loaded.messages[:5] == first.messages[:5]
        assert texts(loaded)[-1] == "Kayu Manis."
        assert len(loaded.messages) == 6
        assert len(run(conversations.read_record)(CONVERSATION).branches) == 1

    def test_branch_refuses_a_stale_revision_and_bad_arguments(self, conversations):
        first = saved(conversations, seven())
        run(conversations.branch)(CONVERSATION, at=6, expected_revision=first.revision)

        with pytest.raises(ConversationConflict):
            run(conversations.branch)(CONVERSATION, at=5, expected_revision=first.revision)
        current = run(conversations.load)(CONVERSATION).revision
        with pytest.raises(UserError):
            run(conversations.branch)(CONVERSATION, at=99, expected_revision=current)
        with pytest.raises(UserError):
            run(conversations.branch)(CONVERSATION, expected_revision=current)
        with pytest.raises(UserError):
            run(conversations.branch)(CONVERSATION, at=1, from_entry="x", expected_revision=current)
        with pytest.raises(UserError):
            run(conversations.branch)("dinner-saturday", at=0, expected_revision=None)
        with pytest.raises(UserError):
            run(conversations.branch)(CONVERSATION, from_entry="nope", expected_revision=current)

    def test_fork_starts_a_new_conversation_and_the_original_carries_on(self, conversations):
        first = saved(conversations, seven())
        first.usage = RunUsage(requests=3)

        fork = run(conversations.fork)(CONVERSATION, at=5, new_conversation_id="dinner-plan-b")

        assert fork.conversation_id == "dinner-plan-b"
        assert fork.messages == first.messages[:5]
        assert fork.usage == RunUsage()  # a part of the history: none of its usage
        record = run(conversations.read_record)("dinner-plan-b")
        assert record.forked_from == CONVERSATION
        assert record.scope == OWNER
        assert record.forked_at == run(conversations.load_entries)(CONVERSATION)[4].id
        fork.messages.append(ask("Kayu Manis."))
        run(conversations.save)(fork)
        assert len(run(conversations.load)(CONVERSATION).messages) == 7
        assert texts(run(conversations.load)("dinner-plan-b"))[-1] == "Kayu Manis."

    def test_fork_of_everything_keeps_the_usage_and_takes_a_scope(self, conversations):
        conversation = Conversation(
            messages=seven(), conversation_id=CONVERSATION, usage=RunUsage(requests=4)
        )
        run(conversations.save)(conversation, scope=OWNER)

        fork = run(conversations.fork)(CONVERSATION, scope="rafa")

        assert fork.usage == RunUsage(requests=4)
        assert fork.messages == conversation.messages
        assert run(conversations.read_record)(fork.conversation_id).scope == "rafa"

    def test_fork_refuses_a_taken_id_and_another_source_scope(self, conversations):
        saved(conversations, seven())
        saved(conversations, [ask("Brunch?")], conversation_id="brunch-sunday")

        with pytest.raises(ConversationConflict):
            run(conversations.fork)(CONVERSATION, new_conversation_id="brunch-sunday")
        with pytest.raises(UserError):
            run(conversations.fork)(CONVERSATION, source_scope="rafa")
        with pytest.raises(UserError):
            run(conversations.fork)("dinner-saturday")

    def test_a_fork_outlives_its_source(self, conversations):
        first = saved(conversations, seven())
        run(conversations.fork)(CONVERSATION, at=4, new_conversation_id="dinner-plan-b")

        run(conversations.delete)(CONVERSATION)

        assert run(conversations.load)(CONVERSATION) is None
        assert run(conversations.load)("dinner-plan-b").messages == first.messages[:4]

    def test_list_is_newest_first_by_scope_and_limit(self, conversations):
        saved(conversations, seven(), scope=OWNER)
        saved(conversations, [ask("Brunch?")], scope="rafa", conversation_id="brunch-sunday")
        saved(conversations, [ask("Lunch?")], scope=OWNER, conversation_id="lunch-monday")

        def ids(**kwargs):
            return [r.conversation_id for r in run(conversations.list_conversations)(**kwargs)]

        assert ids() == ["lunch-monday", "brunch-sunday", CONVERSATION]
        assert ids(scope=OWNER) == ["lunch-monday", CONVERSATION]
        assert ids(limit=1) == ["lunch-monday"]
        assert ids(limit=0) == []
        with pytest.raises(UserError):
            ids(limit=-1)

    def test_delete_forgets_the_conversation_unless_another_scope_is_named(self, conversations):
        saved(conversations, seven(), scope=OWNER)

        run(conversations.delete)(CONVERSATION, scope="rafa")
        assert run(conversations.load)(CONVERSATION) is not None

        run(conversations.delete)(CONVERSATION, scope=OWNER)
        assert run(conversations.load)(CONVERSATION) is None
        assert run(conversations.list_conversations)() == []
        run(conversations.delete)(CONVERSATION)  # nothing to delete: no error

    def test_a_saved_run_result_carries_the_new_revision(self, conversations):
        from pydantic_ai import Agent
        from pydantic_ai.models.test import TestModel

        agent = Agent(TestModel(custom_output_text="A table at 7pm."))
        result = run(agent.run)("Find us a table.", conversation=Conversation(conversation_id="x1"))

        run(conversations.save)(result, scope=OWNER)
        again = run(agent.run)("For four.", conversation=result.conversation)
        run(conversations.save)(again)

        assert run(conversations.load)("x1").messages == again.all_messages()

    def test_write_record_refuses_a_head_nobody_has(self, conversations):
        record = ConversationRecord(conversation_id=CONVERSATION, head_id="no-such-entry")

        with pytest.raises(ConversationConflict):
            run(conversations.write_record)(record, expected_revision=None)
        assert run(conversations.read_record)(CONVERSATION) is None

    def test_write_and_delete_record_check_the_revision(self, conversations):
        entry = ConversationEntry(parent_id=None, message=ask("Hello?"))
        record = ConversationRecord(conversation_id=CONVERSATION, head_id=entry.id, scope=OWNER)
        run(conversations.write_record)(record, new_entries=[entry], expected_revision=None)

        with pytest.raises(ConversationConflict):
            run(conversations.write_record)(record, expected_revision=None)
        with pytest.raises(ConversationConflict):
            run(conversations.write_record)(record, expected_revision="stale")
        with pytest.raises(ConversationConflict):
            run(conversations.delete_record)(CONVERSATION, expected_revision="stale")
        assert run(conversations.read_entry)(entry.id) == entry
        assert run(conversations.read_history)(entry.id) == [entry]
        run(conversations.delete_record)(CONVERSATION, expected_revision=record.revision)
        assert run(conversations.read_record)(CONVERSATION) is None


class TestMessagesAreActa:
    """Each message is one actum of the owner's chronicum, readable by every agent."""

    def test_the_seven_messages_are_the_seeds_seven_acta(self, chronica_store):
        first = saved(chronica_store, seven())

        acta = services.get_acta(OWNER, CONVERSATION)

        assert [(a.kind, a.actor) for a in acta] == [
            (ActumKind.MESSAGE, OWNER),
            (ActumKind.THOUGHT, "concierge"),
            (ActumKind.TOOL_REQUEST, "search"),
            (ActumKind.TOOL_RESPONSE, "search"),
            (ActumKind.MESSAGE, "search"),
            (ActumKind.MESSAGE, OWNER),
            (ActumKind.MESSAGE, "concierge"),
        ]
        assert [a.actor_kind for a in acta] == [
            ActorKind.HUMAN,
            ActorKind.AGENT,
            ActorKind.AGENT,
            ActorKind.SYSTEM,
            ActorKind.AGENT,
            ActorKind.HUMAN,
            ActorKind.AGENT,
        ]
        assert [a.call_id for a in acta] == ["", "", SEARCH_CALL, SEARCH_CALL, "", "", ""]
        messages = [a for a in acta if a.kind == ActumKind.MESSAGE]
        assert [a.content for a in messages] == [scenario.SEVEN[i][3] for i in (0, 4, 5, 6)]
        assert acta[1].content == scenario.SEVEN[1][3]
        assert acta[2].content == 'search({"area":"Kemang","party":4,"quiet":true})'
        assert ModelMessagesTypeAdapter.validate_python([a.data for a in acta]) == first.messages

    def test_the_booking_agent_reads_its_window_of_the_conversation(self, chronica_store):
        saved(chronica_store, seven())

        window = services.get_acta(OWNER, CONVERSATION, kinds=["message"], last_n=3)

        assert [a.content for a in window] == [scenario.SEVEN[i][3] for i in (4, 5, 6)]
        whole = services.get_acta(OWNER, CONVERSATION, whole_tool_calls=True, last_n=4)
        assert ActumKind.TOOL_RESPONSE not in {a.kind for a in whole}

    def test_the_scope_is_the_owner(self, chronica_store):
        saved(chronica_store, seven(), scope=OWNER)

        assert services.get_chronicum(OWNER, CONVERSATION).owner_id == OWNER
        with pytest.raises(ChronicumNotFound):
            services.get_acta("rafa", CONVERSATION)
        assert [c.id for c in services.list_chronica(OWNER)] == [CONVERSATION]

    def test_an_unscoped_conversation_belongs_to_unscoped_owner_id(self):
        store = ChronicaConversationStore(unscoped_owner_id="dinner-bot")
        saved(store, seven(), scope=None)

        assert services.get_chronicum("dinner-bot", CONVERSATION).owner_id == "dinner-bot"
        assert services.get_acta("dinner-bot", CONVERSATION)[0].actor == "user"
        # The record keeps its owner: another store's default does not move it.
        loaded = run(ChronicaConversationStore().load)(CONVERSATION)
        loaded.messages.append(booking_reply())
        run(ChronicaConversationStore().save)(loaded)
        assert len(services.get_acta("dinner-bot", CONVERSATION)) == 8

    def test_acta_others_record_in_between_are_not_part_of_the_conversation(self, chronica_store):
        dinner = seven()
        saved(chronica_store, dinner[:3])
        note = Actum(
            chronicum_id=CONVERSATION,
            kind=ActumKind.MESSAGE,
            actor_kind=ActorKind.HUMAN,
            actor=OWNER,
            content="(typed in the app, not to the agent)",
        )
        services.record_actum(OWNER, note)
        loaded = run(chronica_store.load)(CONVERSATION)
        loaded.messages.extend(dinner[3:])
        run(chronica_store.save)(loaded)
        services.record_actum(OWNER, note)

        assert len(services.get_acta(OWNER, CONVERSATION)) == 9
        assert run(chronica_store.load)(CONVERSATION).messages == dinner
        assert run(chronica_store.load)(CONVERSATION, limit=5).messages == dinner[2:]

    def test_a_branched_history_loads_across_the_branch_point(self, chronica_store):
        first = saved(chronica_store, seven())
        branched = run(chronica_store.branch)(CONVERSATION, at=2, expected_revision=first.revision)
        again = ask("Forget the search: Rumah Teduh.")
        branched.messages.append(again)
        run(chronica_store.save)(branched)

        loaded = run(chronica_store.load)(CONVERSATION, limit=3)

        assert loaded.messages == [*first.messages[:2], again]
        # The chronicum keeps what happened, in the order it happened: both branches.
        assert len(services.get_acta(OWNER, CONVERSATION)) == 8

    def test_load_of_the_last_20_costs_the_same_queries_on_a_longer_conversation(
        self, chronica_store
    ):
        def queries_to_load(conversation_id: str, length: int) -> int:
            messages = [ask(f"turn {n}") for n in range(length)]
            saved(chronica_store, messages, conversation_id=conversation_id)
            with CaptureQueriesContext(connection) as captured:
                loaded = run(chronica_store.load)(conversation_id, limit=20)
            assert texts(loaded) == [f"turn {n}" for n in range(length - 20, length)]
            return len(captured)

        # One query for the record, one for the chain of entries, one window of acta.
        assert queries_to_load("short", 30) == queries_to_load("long", 600) == 3

    def test_tool_arguments_come_back_equal_in_any_key_order(self, chronica_store):
        call = ModelResponse(
            parts=[ToolCallPart("search", {"quiet": True, "party": 4, "area": "Kemang"})],
            model_name="search",
        )
        first = saved(chronica_store, [ask("A table?"), call])

        assert run(chronica_store.load)(CONVERSATION).messages == first.messages


class TestChronicaRules:
    """What chronica refuses or does differently from the in-memory store."""

    def test_a_conversation_id_another_owner_holds_is_a_conflict(self, chronica_store):
        services.record_actum("rafa", scenario.acta()[0])

        with pytest.raises(ConversationConflict):
            saved(chronica_store, seven(), scope=OWNER)

        assert not PydanticAIConversation.objects.exists()
        assert len(services.get_acta("rafa", CONVERSATION)) == 1

    def test_a_conflict_leaves_no_acta_behind(self, chronica_store):
        saved(chronica_store, seven())
        stale = run(chronica_store.load)(CONVERSATION)
        fresh = run(chronica_store.load)(CONVERSATION)
        fresh.messages.append(booking_reply())
        run(chronica_store.save)(fresh)

        stale.messages.append(ask("Make it 6pm."))
        with pytest.raises(ConversationConflict):
            run(chronica_store.save)(stale)

        assert len(services.get_acta(OWNER, CONVERSATION)) == 8
        assert PydanticAIEntry.objects.count() == 8

    def test_a_message_chronica_refuses_stores_nothing(self, chronica_store):
        saved(chronica_store, seven())
        loaded = run(chronica_store.load)(CONVERSATION)
        revision = loaded.revision

        loaded.messages.append(ask("a NUL \x00 in the text"))
        with pytest.raises(InvalidActum):
            run(chronica_store.save)(loaded)

        assert run(chronica_store.load)(CONVERSATION).revision == revision
        assert len(services.get_acta(OWNER, CONVERSATION)) == 7

    @pytest.mark.parametrize(
        ("conversation_id", "scope"), [(" dinner-friday", OWNER), (CONVERSATION, "")]
    )
    def test_ids_chronica_cannot_keep_are_refused(self, chronica_store, conversation_id, scope):
        with pytest.raises(InvalidActum):
            saved(chronica_store, seven(), scope=scope, conversation_id=conversation_id)
        assert not PydanticAIConversation.objects.exists()

    def test_delete_erases_the_chronicum_and_a_fork_keeps_its_own_copy(self, chronica_store):
        saved(chronica_store, seven())
        run(chronica_store.fork)(CONVERSATION, at=3, new_conversation_id="dinner-plan-b")

        run(chronica_store.delete)(CONVERSATION)

        with pytest.raises(ChronicumNotFound):
            services.get_acta(OWNER, CONVERSATION)
        copied = services.get_acta(OWNER, "dinner-plan-b")
        assert [a.kind for a in copied] == [
            ActumKind.MESSAGE,
            ActumKind.THOUGHT,
            ActumKind.TOOL_REQUEST,
        ]
        assert PydanticAIEntry.objects.filter(conversation_id=CONVERSATION).count() == 0

    def test_deleting_the_chronicum_through_chronica_deletes_the_conversation(
        self, chronica_store, django_capture_on_commit_callbacks
    ):
        saved(chronica_store, seven())

        with django_capture_on_commit_callbacks(execute=True):
            services.delete_chronicum(OWNER, CONVERSATION)  # as the admin and the API do

        assert run(chronica_store.load)(CONVERSATION) is None
        assert run(chronica_store.list_conversations)() == []
        saved(chronica_store, [ask("Again?")])  # the ID is free again

    def test_a_chronicum_of_the_same_owner_takes_the_conversation_in(self, chronica_store):
        first, *_ = services.record_acta(OWNER, scenario.acta())

        dinner = saved(chronica_store, [booking_reply()], scope=OWNER)

        assert run(chronica_store.load)(CONVERSATION).messages == dinner.messages
        acta = services.get_acta(OWNER, CONVERSATION)
        assert len(acta) == 8
        assert acta[0] == first

    def test_a_chronicum_deleted_with_plain_sql_leaves_a_record_to_delete(self, chronica_store):
        saved(chronica_store, seven())
        with connection.cursor() as cursor:  # as a writer that knows only the seed's tables
            cursor.execute("DELETE FROM acta WHERE chronicum_id = %s", [CONVERSATION])
            cursor.execute("DELETE FROM chronica WHERE id = %s", [CONVERSATION])

        with pytest.raises(ChronicumNotFound):
            run(chronica_store.load)(CONVERSATION)
        run(chronica_store.delete)(CONVERSATION)
        assert run(chronica_store.load)(CONVERSATION) is None

    def test_a_popped_message_is_named_when_the_conversation_is_loaded(self, chronica_store):
        saved(chronica_store, seven())
        entries = run(chronica_store.load_entries)(CONVERSATION)

        services.pop_actum(OWNER, CONVERSATION)

        with pytest.raises(KeyError, match=entries[-1].id):
            run(chronica_store.load)(CONVERSATION)

    def test_it_needs_a_store_on_a_django_database(self, chronica_store):
        with (
            override_settings(CHRONICA={"STORE": "chronica.stores.memory.InMemoryStore"}),
            pytest.raises(ImproperlyConfigured, match="DjangoStore"),
        ):
            run(chronica_store.load)(CONVERSATION)

    def test_entries_are_plain_values(self, chronica_store):
        saved(chronica_store, seven())

        entries = run(chronica_store.load_entries)(CONVERSATION)

        assert all(dataclasses.is_dataclass(e) for e in entries)
        assert isinstance(entries[0].message, ModelRequest)
        assert isinstance(entries[0].message.parts[0], UserPromptPart)
