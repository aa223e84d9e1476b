"""Issue 21: a ChronicaConversationStore in an agent service, with the agent's own
credential: it writes as its agent, never as the person, and what it writes is
attested."""

from __future__ import annotations

import pytest
from pydantic_ai.conversation import Conversation
from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart

from chronica import ActorKind, ChronicumNotFound, NotPermitted, services
from chronica.integrations.pydantic_ai import ChronicaConversationStore
from chronica.integrations.pydantic_ai.models import PydanticAIConversation

from .scenario import CONVERSATION, OWNER, ask, run, say

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_chronicarius():
    services.reset_chronicarius()
    yield
    services.reset_chronicarius()


@pytest.fixture
def issued() -> services.IssuedCredential:
    return services.issue_credential(OWNER, "booking")


@pytest.fixture
def booking(issued) -> ChronicaConversationStore:
    """The booking agent's store, as its service builds it from its secret."""
    return ChronicaConversationStore(identity=services.authenticate_credential(issued.secret))


@pytest.fixture
def asked() -> Conversation:
    """ardian, signed in as himself, asks for a table."""
    person = ChronicaConversationStore(identity=services.OwnerIdentity(OWNER))
    conversation = Conversation(messages=[ask("Book Rumah Teduh.")], conversation_id=CONVERSATION)
    run(person.save)(conversation, scope=OWNER)
    return conversation


def written() -> list[tuple[str, str, str | None]]:
    return [
        (a.actor_kind.value, a.actor, a.recorded_by) for a in services.get_acta(OWNER, CONVERSATION)
    ]


def test_it_writes_as_its_agent_and_is_attested(asked, booking, issued):
    loaded = run(booking.load)(CONVERSATION)
    assert loaded is not None
    loaded.messages += [
        ModelResponse(parts=[ToolCallPart("hold", {"at": "7pm"}, tool_call_id="h1")]),
        # A tool's result is a system actum for a person's store; the agent's here.
        ModelRequest(parts=[ToolReturnPart("hold", "held", tool_call_id="h1")]),
        say("gpt-5", "Held: Rumah Teduh, 7pm."),
    ]
    run(booking.save)(loaded)
    by = f"credential:{issued.info.key_id}"
    assert written() == [
        ("human", "ardian", "owner"),
        ("agent", "booking", by),
        ("agent", "booking", by),
        ("agent", "booking", by),
    ]
    # The model's name stays in the message, which comes back as it was.
    assert run(booking.load)(CONVERSATION).messages == loaded.messages


def test_a_system_credential_writes_its_tool_results_as_system(asked):
    issued = services.issue_credential(OWNER, "booking", actor_kinds=["agent", "system"])
    store = ChronicaConversationStore(identity=services.authenticate_credential(issued.secret))
    loaded = run(store.load)(CONVERSATION)
    loaded.messages.append(ModelRequest(parts=[ToolReturnPart("hold", "held", tool_call_id="h")]))
    run(store.save)(loaded)
    (stored,) = services.get_acta(OWNER, CONVERSATION, last_n=1)
    assert (stored.actor_kind, stored.actor) == (ActorKind.SYSTEM, "booking")


def test_the_person_is_refused_and_nothing_is_written(asked, booking):
    loaded = run(booking.load)(CONVERSATION)
    revision = loaded.revision
    loaded.messages += [say("gpt-5", "Shall I pay?"), ask("Yes, book it and pay.")]
    with pytest.raises(NotPermitted) as refused:
        run(booking.save)(loaded)
    assert refused.value.rule == "actor"
    assert written() == [("human", "ardian", "owner")]
    assert run(booking.load)(CONVERSATION).revision == revision


def test_another_owners_conversations_are_not_its(booking):
    rafa = ChronicaConversationStore()
    run(rafa.save)(Conversation(messages=[ask("Sushi?")], conversation_id="lunch"), scope="rafa")
    assert run(booking.load)("lunch") is None
    mine = Conversation(messages=[say("gpt-5", "Held.")], conversation_id="rafa-dinner")
    with pytest.raises(ChronicumNotFound):
        run(booking.save)(mine, scope="rafa")
    assert not PydanticAIConversation.objects.filter(conversation_id="rafa-dinner").exists()


def test_listing_and_deleting_are_the_persons(asked, booking):
    with pytest.raises(NotPermitted):
        run(booking.list_conversations)(scope=OWNER)
    with pytest.raises(NotPermitted):
        run(booking.delete)(CONVERSATION, scope=OWNER)
    assert run(booking.load)(CONVERSATION) is not None
    allowed = services.issue_credential(OWNER, "booking", may_list=True, may_delete=True)
    store = ChronicaConversationStore(identity=services.authenticate_credential(allowed.secret))
    assert [c.conversation_id for c in run(store.list_conversations)(scope=OWNER)] == [CONVERSATION]
    run(store.delete)(CONVERSATION, scope=OWNER)
    assert run(store.load)(CONVERSATION) is None


def test_unscoped_conversations_are_its_owners(booking):
    conversation = Conversation(messages=[say("gpt-5", "Held.")], conversation_id="held")
    run(booking.save)(conversation)
    assert services.get_chronicum(OWNER, "held").owner_id == OWNER
    assert ChronicaConversationStore().unscoped_owner_id == "pydantic-ai"
