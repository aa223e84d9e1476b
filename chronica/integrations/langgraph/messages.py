"""A LangGraph (LangChain) message as chronica's acta.

* a human message: one ``message`` by a ``human`` (the message's ``name``, else the
  saver's ``user_actor``);
* an AI message: a ``message`` by an ``agent`` (its ``name``, else the saver's
  ``agent``) when it has text, then one ``tool_request`` per tool call, its
  ``call_id`` the call's ID;
* a tool message: a ``tool_response`` by the tool (``system``), its ``call_id`` the
  call it answers;
* a system message (and any other kind): a ``message`` by ``system``.

The first actum's ``data`` is the whole message as LangChain's ``message_to_dict``
writes it (``{"type": ..., "data": {...}}``); a tool request's is its tool call. A
message with nothing to read (no text, no tool call) gets no actum.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    message_to_dict,
)

from chronica import ActorKind, Actum, ActumKind

__all__ = ["acta_of", "is_message_list"]


def is_message_list(value: object) -> bool:
    """A non-empty list of LangChain messages that all have an ID (``add_messages``
    gives every message one): a channel value kept as references to acta."""
    return (
        type(value) is list
        and bool(value)
        and all(isinstance(m, BaseMessage) and isinstance(m.id, str) and m.id for m in value)
    )


def _jsonable(value: Any) -> Any:
    # What JSON cannot hold (bytes, objects in additional_kwargs) becomes its text.
    return json.loads(json.dumps(value, default=str))


def _text(message: BaseMessage) -> str:
    # langchain-core 1: a property (a str whose call is deprecated).
    return str(message.text)


def acta_of(message: BaseMessage, chronicum_id: str, *, agent: str, user_actor: str) -> list[Actum]:
    """The acta that record ``message`` in the chronicum (see the module's docstring)."""
    data = _jsonable(message_to_dict(message))
    text = _text(message)
    name = message.name if isinstance(message.name, str) and message.name else None
    acta: list[Actum] = []
    if isinstance(message, HumanMessage):
        if text:
            acta.append(
                Actum(
                    chronicum_id=chronicum_id,
                    kind=ActumKind.MESSAGE,
                    actor_kind=ActorKind.HUMAN,
                    actor=name or user_actor,
                    content=text,
                )
            )
    elif isinstance(message, AIMessage):
        actor = name or agent
        if text:
            acta.append(
                Actum(
                    chronicum_id=chronicum_id,
                    kind=ActumKind.MESSAGE,
                    actor_kind=ActorKind.AGENT,
                    actor=actor,
                    content=text,
                )
            )
        for call in message.tool_calls:
            arguments = json.dumps(call.get("args", {}), default=str, sort_keys=True)
            acta.append(
                Actum(
                    chronicum_id=chronicum_id,
                    kind=ActumKind.TOOL_REQUEST,
                    actor_kind=ActorKind.AGENT,
                    actor=actor,
                    content=f"{call['name']}({arguments})",
                    call_id=call.get("id") or "",
                    data=_jsonable(dict(call)),
                )
            )
    elif isinstance(message, ToolMessage):
        acta.append(
            Actum(
                chronicum_id=chronicum_id,
                kind=ActumKind.TOOL_RESPONSE,
                actor_kind=ActorKind.SYSTEM,
                actor=name or "tool",
                content=text,
                call_id=message.tool_call_id or "",
            )
        )
    elif text:
        acta.append(
            Actum(
                chronicum_id=chronicum_id,
                kind=ActumKind.MESSAGE,
                actor_kind=ActorKind.SYSTEM,
                actor=name or "system",
                content=text,
            )
        )
    if acta:
        # The whole message rides on its first actum; a tool request keeps its call.
        first = acta[0]
        data = data if first.data is None else {"message": data, "tool_call": first.data}
        acta[0] = Actum(
            chronicum_id=first.chronicum_id,
            kind=first.kind,
            actor_kind=first.actor_kind,
            actor=first.actor,
            content=first.content,
            call_id=first.call_id,
            data=data,
        )
    return acta
