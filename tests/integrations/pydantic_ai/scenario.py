"""The seed's dinner-friday session as PydanticAI messages: ardian, the concierge,
search and booking, one model message for each of the seven acta."""

from __future__ import annotations

from asgiref.sync import async_to_sync
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from ... import scenario

OWNER = scenario.OWNER
CONVERSATION = scenario.CHRONICUM
SEARCH_CALL = "search-1"
SEARCH_ARGS = {"area": "Kemang", "party": 4, "quiet": True}
SEARCH_RESULT = [{"name": "Rumah Teduh", "table": True}, {"name": "Kayu Manis", "table": True}]


def ask(text: str) -> ModelRequest:
    """What ardian types."""
    return ModelRequest(parts=[UserPromptPart(text)])


def say(agent: str, text: str) -> ModelResponse:
    """What an agent answers."""
    return ModelResponse(parts=[TextPart(text)], model_name=agent)


def seven() -> list[ModelMessage]:
    """dinner-friday as the seven model messages behind the seed's seven acta."""
    (_, _, _, request), (_, _, _, thought) = scenario.SEVEN[0], scenario.SEVEN[1]
    return [
        ask(request),
        ModelResponse(parts=[ThinkingPart(thought)], model_name="concierge"),
        ModelResponse(
            parts=[ToolCallPart("search", SEARCH_ARGS, tool_call_id=SEARCH_CALL)],
            model_name="search",
        ),
        ModelRequest(parts=[ToolReturnPart("search", SEARCH_RESULT, tool_call_id=SEARCH_CALL)]),
        say("search", scenario.SEVEN[4][3]),
        ask(scenario.SEVEN[5][3]),
        say("concierge", scenario.SEVEN[6][3]),
    ]


def booking_reply() -> ModelResponse:
    return say("booking", scenario.BOOKING_REPLY)


run = async_to_sync
"""Call a coroutine function from a test: its database work stays on the test's thread
(and connection), inside the test's transaction."""
