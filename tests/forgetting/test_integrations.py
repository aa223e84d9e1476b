"""A redacted actum reads back through every framework integration as that
framework's empty equivalent, never a crash."""

from __future__ import annotations

import asyncio

import pytest

from chronica import services

from ..scenario import CHRONICUM, OWNER

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def fresh_chronicarius():
    services.reset_chronicarius()
    yield
    services.reset_chronicarius()


def test_openai_agents_session():
    pytest.importorskip("agents")
    from chronica.integrations.openai_agents import ChronicaSession

    session = ChronicaSession(CHRONICUM, owner_id=OWNER)
    items = [
        {"role": "user", "content": "my card is 4111 1111 1111 1111"},
        {
            "type": "function_call",
            "call_id": "pay-1",
            "name": "pay",
            "arguments": '{"card": "4111 1111 1111 1111"}',
        },
        {"type": "function_call_output", "call_id": "pay-1", "output": "paid with 4111"},
        {"role": "assistant", "content": "Paid."},
    ]
    asyncio.run(session.add_items(items))
    for actum in services.get_acta(OWNER, CHRONICUM)[:3]:
        services.redact_actum(OWNER, CHRONICUM, actum.id, reason="card")
    back = asyncio.run(session.get_items())
    assert back[0] == {"role": "user", "content": ""}
    assert back[1]["type"] == "function_call"
    assert back[1]["call_id"] == "pay-1"
    assert back[1]["arguments"] == "{}"
    assert back[2] == {"type": "function_call_output", "call_id": "pay-1", "output": ""}
    assert back[3] == items[3]
    assert "4111" not in repr(back)


def test_pydantic_ai_conversation_store():
    pytest.importorskip("pydantic_ai")
    from pydantic_ai.conversation import Conversation
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

    from chronica.integrations.pydantic_ai import ChronicaConversationStore

    store = ChronicaConversationStore()
    messages = [
        ModelRequest(parts=[UserPromptPart("my card is 4111 1111 1111 1111")]),
        ModelResponse(parts=[TextPart("Noted.")], model_name="concierge"),
    ]
    asyncio.run(store.save(Conversation(messages=messages, conversation_id=CHRONICUM), scope=OWNER))
    first = services.get_acta(OWNER, CHRONICUM)[0]
    services.redact_actum(OWNER, CHRONICUM, first.id)
    loaded = asyncio.run(store.load(CHRONICUM, scope=OWNER))
    assert loaded is not None
    assert len(loaded.messages) == 2
    assert "4111" not in repr(loaded.messages)
    assert loaded.messages[1].parts[0].content == "Noted."


def test_google_adk_session_service():
    pytest.importorskip("google.adk")
    from google.adk.events.event import Event
    from google.genai import types

    from chronica.integrations.google_adk import ChronicaSessionService

    service = ChronicaSessionService()
    session = asyncio.run(service.create_session(app_name="dinner", user_id=OWNER))
    said = Event(
        invocation_id="i1",
        author="user",
        content=types.Content(role="user", parts=[types.Part(text="card 4111 1111 1111 1111")]),
    )
    asyncio.run(service.append_event(session, said))
    (actum,) = [
        a
        for c in services.list_chronica(OWNER)
        for a in services.get_acta(OWNER, c.id)
        if "4111" in a.content
    ]
    services.redact_actum(OWNER, actum.chronicum_id, actum.id)
    back = asyncio.run(service.get_session(app_name="dinner", user_id=OWNER, session_id=session.id))
    assert back is not None
    assert len(back.events) == 1
    assert "4111" not in repr(back.events)


def test_pydantic_ai_records_are_erased_with_the_owner():
    pytest.importorskip("pydantic_ai")
    from pydantic_ai.conversation import Conversation
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    from chronica.integrations.pydantic_ai import ChronicaConversationStore
    from chronica.integrations.pydantic_ai.models import PydanticAIConversation, PydanticAIEntry

    store = ChronicaConversationStore()
    messages = [ModelRequest(parts=[UserPromptPart("a quiet table for four")])]
    for owner in (OWNER, "rafa"):
        conversation = Conversation(messages=messages, conversation_id=f"{owner}-dinner")
        asyncio.run(store.save(conversation, scope=owner))
    planned = services.erase_owner(OWNER, dry_run=True)
    assert planned.counts["chronica_pydantic_ai_conversations"] == 1
    erasure = services.erase_owner(OWNER)
    assert erasure.counts["chronica_pydantic_ai_conversations"] == 1
    assert erasure.counts["chronica_pydantic_ai_entries"] == 1
    assert list(PydanticAIConversation.objects.values_list("owner_id", flat=True)) == ["rafa"]
    assert PydanticAIEntry.objects.count() == 1
    assert asyncio.run(store.load(f"{OWNER}-dinner", scope=OWNER)) is None
