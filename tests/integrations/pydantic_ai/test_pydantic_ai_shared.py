"""PydanticAI in a session others share: whose name an actum carries, ChronicaHistory,
and what the store refuses before any query."""

from __future__ import annotations

import pytest
from pydantic_ai import Agent
from pydantic_ai.conversation import Conversation
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models.test import TestModel

from chronica import Actum, InvalidActum, InvalidQuery, NotPermitted, services
from chronica.integrations.pydantic_ai import (
    ChronicaConversationStore,
    ChronicaHistory,
    actum_of,
    message_of,
)
from chronica.integrations.pydantic_ai.models import PydanticAIConversation

from .scenario import CONVERSATION, OWNER, ask, run, say

pytestmark = pytest.mark.django_db(transaction=True)


def actors() -> list[tuple[str, str]]:
    return [(a.actor_kind.value, a.actor) for a in services.get_acta(OWNER, CONVERSATION)]


def test_two_agents_on_one_model_are_told_apart_by_their_names():
    concierge = Agent(TestModel(model_name="gpt-4.1"), name="concierge")
    booking = Agent(TestModel(model_name="gpt-4.1"), name="booking")
    conversation = Conversation(conversation_id=CONVERSATION, messages=[ask("A table?")])
    run(ChronicaConversationStore(agent=concierge, user_actor="ardian").save)(
        conversation, scope=OWNER
    )
    conversation.messages.append(say("gpt-4.1", "Rumah Teduh."))
    run(ChronicaConversationStore(agent=concierge).save)(conversation, scope=OWNER)
    conversation.messages.append(say("gpt-4.1", "Held."))
    run(ChronicaConversationStore(agent=booking).save)(conversation, scope=OWNER)
    conversation.messages.append(say("gpt-4.1", "No name: the model's."))
    run(ChronicaConversationStore().save)(conversation, scope=OWNER)

    assert actors() == [
        ("human", "ardian"),
        ("agent", "concierge"),
        ("agent", "booking"),
        ("agent", "gpt-4.1"),
    ]
    assert actum_of(say("gpt-4.1", "x"), CONVERSATION, OWNER, agent_name="search").actor == "search"


@pytest.mark.parametrize("scope", ["a\x00b", "", "tab\tbed", "x" * 256])
def test_a_scope_no_owner_can_be_is_refused_before_any_query(scope):
    store = ChronicaConversationStore()
    conversation = Conversation(conversation_id=CONVERSATION, messages=[ask("A table?")])
    with pytest.raises(InvalidActum):
        run(store.save)(conversation, scope=scope)
    with pytest.raises(InvalidQuery):
        run(store.list_conversations)(scope=scope)
    assert not PydanticAIConversation.objects.exists()
    assert services.list_chronica(OWNER) == []


def test_a_conversation_id_no_chronicum_can_have_is_refused_and_nothing_is_written():
    store = ChronicaConversationStore()
    conversation = Conversation(conversation_id="dinner\x00friday", messages=[ask("A table?")])
    with pytest.raises(InvalidActum):
        run(store.save)(conversation, scope=OWNER)
    assert not PydanticAIConversation.objects.exists()


def test_the_history_reads_the_window_of_a_shared_session_and_records_the_run():
    services.record_acta(
        OWNER,
        [
            Actum(
                chronicum_id=CONVERSATION,
                kind="message",
                actor_kind="human",
                actor="ardian",
                content="A quiet table for four?",
            ),
            Actum(
                chronicum_id=CONVERSATION,
                kind="message",
                actor_kind="agent",
                actor="concierge",
                content="Search first.",
                data={"role": "assistant", "content": "Search first."},  # an SDK item
            ),
            Actum(
                chronicum_id=CONVERSATION,
                kind="message",
                actor_kind="system",
                actor="system",
                content="Be brief.",
            ),
        ],
    )
    issued = services.issue_credential(OWNER, "search")
    identity = services.authenticate_credential(issued.secret)
    search = Agent(TestModel(custom_output_text="Rumah Teduh."), name="search")
    history = ChronicaHistory(CONVERSATION, identity=identity, agent=search)

    messages = run(history.load)()
    assert [(type(m), type(m.parts[0]), m.parts[0].content) for m in messages] == [
        (ModelRequest, UserPromptPart, "A quiet table for four?"),
        (ModelResponse, TextPart, "Search first."),
        (ModelRequest, SystemPromptPart, "Be brief."),
    ]
    assert messages[1].model_name == "concierge"
    windowed = ChronicaHistory(
        CONVERSATION, owner_id=OWNER, window={"actor_kinds": ["human"], "last_n": 1}
    )
    assert len(run(windowed.load)()) == 1

    result = run(search.run)(None, message_history=run(windowed.load)())
    stored = run(history.save)(result)
    assert [(a.actor, a.content, a.recorded_by) for a in stored] == [
        ("search", "Rumah Teduh.", f"credential:{issued.info.key_id}")
    ]
    # What PydanticAI wrote reads back as the message it was.
    assert message_of(stored[0]) == result.new_messages()[0]
    # The person's words are never the agent's to write.
    with pytest.raises(NotPermitted):
        run(history.save)([ask("Yes, book it and pay.")])
    assert len(services.get_acta(OWNER, CONVERSATION)) == 4
    with pytest.raises(TypeError, match="window takes"):
        ChronicaHistory(CONVERSATION, owner_id=OWNER, window={"before": "x"})
    assert run(ChronicaHistory("nobody-has-this", owner_id=OWNER).load)() == []
