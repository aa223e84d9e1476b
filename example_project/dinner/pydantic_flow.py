"""dinner-friday with PydanticAI agents whose conversation lives in chronica.

Two agents run on PydanticAI's ``TestModel`` (no network, no API key): the concierge
calls its search tool and answers, then booking holds the table. Each turn loads the
conversation from ``ChronicaConversationStore``, runs, and saves it back under the
owner's scope, so every message is an actum of the owner's chronicum: the admin, the
API and every other agent's ``get_acta`` see the conversation like any session.
"""

from __future__ import annotations

import itertools
from typing import Literal

from asgiref.sync import async_to_sync
from django.urls import reverse
from pydantic_ai import Agent
from pydantic_ai.conversation import Conversation
from pydantic_ai.conversation_store import ConversationConflict
from pydantic_ai.models.test import TestModel

from chronica import services
from chronica.integrations.pydantic_ai import ChronicaConversationStore, ChronicaHistory
from example_project.dinner.scenario import (
    BOOKING_REPLY,
    CAKE_ANSWER,
    CAKE_SHOP,
    CHRONICUM,
    SEVEN,
)

CONVERSATION = f"{CHRONICUM}-pydantic-ai"
REQUEST = SEVEN[0][3]
CHOICE = "Rumah Teduh, please."
ANSWER = "Rumah Teduh has a quiet table for four at 7pm; Kayu Manis has one too."

concierge = Agent(
    TestModel(model_name="concierge", custom_output_text=ANSWER),
    name="concierge",
    instructions="You plan ardian's dinners: search first, then answer.",
)
booking = Agent(
    TestModel(model_name="booking", call_tools=[], custom_output_text=BOOKING_REPLY),
    name="booking",
    instructions="You hold the table the person chose.",
)
store = ChronicaConversationStore()


@concierge.tool_plain
def search(area: Literal["Kemang"], party: Literal[4]) -> list[dict[str, object]]:
    """Quiet tables for ``party`` in ``area`` on Friday at 7pm."""
    return [{"name": "Rumah Teduh", "table": True}, {"name": "Kayu Manis", "table": True}]


async def turn(agent: Agent[None, str], owner_id: str, conversation_id: str, prompt: str) -> str:
    """One turn: load the conversation from chronica, run ``agent``, save it back."""
    conversation = await store.load(conversation_id, scope=owner_id) or Conversation(
        conversation_id=conversation_id
    )
    result = await agent.run(prompt, conversation=conversation)
    await store.save(result, scope=owner_id)
    return result.output


async def dinner(owner_id: str) -> str:
    """ardian asks, the concierge searches and answers, booking holds the table.

    Each run starts a conversation no earlier run used (``dinner-friday-pydantic-ai``,
    then ``-2``, ``-3``...); returns its ID, which is also its chronicum's."""
    for n in itertools.count(1):
        conversation_id = CONVERSATION if n == 1 else f"{CONVERSATION}-{n}"
        if await store.read_record(conversation_id) is not None:
            continue
        try:
            await turn(concierge, owner_id, conversation_id, REQUEST)
        except ConversationConflict:
            continue  # taken meanwhile, or a chronicum of someone else
        break
    await turn(booking, owner_id, conversation_id, CHOICE)
    return conversation_id


def pydantic_dinner(owner_id: str) -> list[str]:
    """For ``manage.py chronica_demo``: run the dinner; return the lines to print."""
    conversation_id = async_to_sync(dinner)(owner_id)
    acta = services.get_acta(owner_id, conversation_id)
    lines = [
        f"PydanticAI agents (TestModel, no network) kept their conversation in chronica,"
        f" chronicum {conversation_id}: {len(acta)} messages, {len(acta)} acta",
        *(f"  {a.actor_kind:<6} {a.actor:<10} {a.kind:<14} {a.content}" for a in acta),
    ]
    # The example project serves the admin; the chronicum's page lists every message.
    admin_page = reverse("admin:chronica_chronicum_change", args=[conversation_id])
    lines.append(f"  in the admin: {admin_page}")
    return lines


# -- search's turn in the session every framework shares -----------------------------

search_agent = Agent(
    TestModel(model_name="search-model", call_tools=["find_cake"], custom_output_text=CAKE_ANSWER),
    name="search",
    instructions="You find places and shops near the person's table.",
)


@search_agent.tool_plain
def find_cake(area: Literal["Kemang"], party: Literal[4]) -> list[dict[str, object]]:
    """Bakers in ``area`` with a cake for ``party`` by Friday."""
    return [{"name": CAKE_SHOP, "cake": "chocolate", "ready": "Friday 17:00"}]


SEARCH_WINDOW = {"kinds": ["message"], "actor_kinds": ["human"]}


async def search_turn(owner_id: str, chronicum_id: str, identity: services.Identity) -> None:
    """search reads its window of the shared session (what the person said, in their own
    words), finds a cake and answers, with its own credential: the person's newest
    message ends the history, so the run needs no prompt of its own."""
    history = ChronicaHistory(
        chronicum_id, owner_id=owner_id, identity=identity, agent=search_agent, window=SEARCH_WINDOW
    )
    result = await search_agent.run(None, message_history=await history.load())
    await history.save(result)
