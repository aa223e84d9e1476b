"""One PydanticAI message, one actum, and back: what every PydanticAI integration of
chronica records and reads."""

from __future__ import annotations

import contextlib
import datetime as dt
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

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

from chronica import ActorKind, Actum, ActumKind, services

if TYPE_CHECKING:
    from pydantic_ai import Agent

__all__ = ["actum_of", "message_of"]


def actum_of(
    message: ModelMessage,
    chronicum_id: str,
    human: str,
    agent: services.AgentIdentity | None = None,
    *,
    agent_name: str | None = None,
) -> Actum:
    """The actum that holds ``message``: its kind and actor from its parts.

    A tool call makes a tool request and a tool return a tool response (``call_id``
    the first call's ID, so that chronica pairs them); thinking alone is a thought; a
    user prompt is ``human``'s message, other requests the system's, other responses
    the agent's (``agent_name``, else the model's name). ``data`` is the message as
    PydanticAI serialises it. Written by an ``agent`` (a credential), every message but
    a user prompt is the agent's own: its actor, and its actor kind where the
    credential has that one (else its default).
    """
    data = ModelMessagesTypeAdapter.dump_python([message], mode="json")[0]
    if isinstance(message, ModelRequest):
        kind, actor_kind, actor, call_id, text = _request(message, human)
    elif isinstance(message, ModelResponse):
        kind, actor_kind, actor, call_id, text = _response(message, agent_name)
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
        call_id=identifier(call_id, ""),
        data=data,
    )


_Shape = tuple[ActumKind, ActorKind, str, str, str]


def _request(message: ModelRequest, human: str) -> _Shape:
    returns = [part for part in message.parts if isinstance(part, ToolReturnPart)]
    if returns:
        texts = [part.model_response_str() for part in returns]
        actor = identifier(returns[0].tool_name, "tool")
        call_id = returns[0].tool_call_id
        return ActumKind.TOOL_RESPONSE, ActorKind.SYSTEM, actor, call_id, "\n".join(texts)
    prompts = [part for part in message.parts if isinstance(part, UserPromptPart)]
    if prompts:
        text = "\n".join(_prompt_text(part.content) for part in prompts)
        return ActumKind.MESSAGE, ActorKind.HUMAN, identifier(human, "user"), "", text
    texts = [part.content for part in message.parts if isinstance(part, SystemPromptPart)]
    return ActumKind.MESSAGE, ActorKind.SYSTEM, "system", "", "\n".join(texts)


def _response(message: ModelResponse, agent_name: str | None) -> _Shape:
    actor = identifier(agent_name or message.model_name or "", "agent")
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


def message_of(actum: Actum) -> ModelMessage:
    """The PydanticAI message ``actum`` holds; for an actum of another framework, the
    API or the person (its ``data`` no PydanticAI message), a message of its text: a
    person's is a user prompt, an agent's a model response under its actor's name, the
    rest a system prompt."""
    data = actum.data
    if isinstance(data, dict) and data.get("kind") in ("request", "response"):
        with contextlib.suppress(ValueError):
            return ModelMessagesTypeAdapter.validate_python([data])[0]
    at = actum.at or dt.datetime.now(dt.UTC)  # acta read back from chronica have their time
    if actum.actor_kind is ActorKind.HUMAN:
        return ModelRequest(parts=[UserPromptPart(actum.content, timestamp=at)], timestamp=at)
    if actum.actor_kind is ActorKind.AGENT:
        return ModelResponse(parts=[TextPart(actum.content)], model_name=actum.actor, timestamp=at)
    return ModelRequest(parts=[SystemPromptPart(actum.content, timestamp=at)], timestamp=at)


# What chronica takes as an owner, an actor or a call ID: at most 255 characters, no
# control character (C0, DEL, C1), nothing no database keeps (a NUL, a lone surrogate).
_UNFIT = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def identifier(value: str, fallback: str) -> str:
    """``value`` if chronica takes it as an actor or a call ID, else ``fallback``."""
    if not isinstance(value, str) or len(value) > 255 or _UNFIT.search(value):
        return fallback
    return value or fallback


def agent_name(agent: Agent[Any, Any] | str | None) -> str | None:
    """The name an agent's messages are recorded under: its ``name`` (``None`` when it
    has none, and then the model's name is used)."""
    if agent is None or isinstance(agent, str):
        return agent
    return agent.name
