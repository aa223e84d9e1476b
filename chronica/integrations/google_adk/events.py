"""One ADK event, one actum, and back: what ``ChronicaSessionService`` stores and
reads, on ADK's public constructors (``Event.model_validate``) only."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any

from google.adk.events.event import Event
from google.genai import types
from pydantic import TypeAdapter, ValidationError

from chronica import ActorKind, Actum, ActumKind, InvalidActum, services

__all__ = ["actum_of", "event_key", "event_of", "events_of", "stored_form"]


def stored_form(event: Event) -> dict[str, Any]:
    """The event as it is stored, checked to read back as an event: one that would not
    (a timestamp that is not a number, say) would make every later read of its
    session fail, so it is refused here, before anything is written."""
    # Unchecked: a field of the wrong type is refused below, with what is wrong.
    data = event.model_dump(exclude_none=True, mode="json", warnings=False)
    try:
        Event.model_validate(data)
    except ValidationError as exc:
        raise InvalidActum(f"the ADK event would not read back: {exc}") from None
    timestamp = data.get("timestamp")
    if isinstance(timestamp, bool) or not isinstance(timestamp, int | float):
        raise InvalidActum(f"the ADK event's timestamp is not a time: {timestamp!r}")
    return data


def event_key(data: dict[str, Any]) -> str:
    """The idempotency key of an event: equal events (ID and every field) share it."""
    # ASCII: text no database keeps (a lone surrogate) reaches the rules, which refuse it.
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return "adk-event:" + hashlib.sha256(text.encode()).hexdigest()


_EVENTS: TypeAdapter[list[Event]] = TypeAdapter(list[Event])


def events_of(acta: Iterable[Actum]) -> list[Event]:
    """The events ``acta`` hold (:func:`event_of`), in their order. The ADK events are
    decoded in one call of pydantic's: a session read is mostly their decoding. Another
    framework's compaction (its summary and its copies of what it compacted, ``compact``)
    is that framework's own view of history, which ADK reads whole: it is left out."""
    acta = [a for a in acta if not a.compacts or _holds_event(a)]
    held = [actum.data for actum in acta if _holds_event(actum)]
    if len(held) == len(acta):
        return _EVENTS.validate_python(held)
    decoded = iter(_EVENTS.validate_python(held))
    return [next(decoded) if _holds_event(actum) else event_of(actum) for actum in acta]


def _holds_event(actum: Actum) -> bool:
    data = actum.data
    return isinstance(data, dict) and "author" in data and "invocation_id" in data


def event_of(actum: Actum) -> Event:
    """The event ``actum`` holds; for an actum of another framework, the API or the
    person (its ``data`` no ADK event), an event of its text: authored by its actor
    (``"user"`` for a person), with its ID and its time."""
    if _holds_event(actum):
        return Event.model_validate(actum.data)
    human = actum.actor_kind is ActorKind.HUMAN
    return Event(
        id=actum.id,
        invocation_id="",
        author="user" if human else actum.actor,
        timestamp=actum.at.timestamp() if actum.at is not None else 0.0,
        content=types.Content(
            role="user" if human else "model", parts=[types.Part(text=actum.content)]
        ),
    )


def actum_of(
    event: Event,
    chronicum: str,
    user_actor: str,
    data: dict[str, Any] | None = None,
    *,
    agent: services.AgentIdentity | None = None,
) -> Actum:
    """The actum that holds ``event`` (``data``, its serialised form) in ``chronicum``.

    A function call makes a tool request and a function response a tool response
    (``call_id`` the first call's ID); thought parts alone make a thought; anything
    else a message. The user's turns are ``user_actor``'s, as a human; the rest the
    authoring agent's, or the ``agent`` credential's where there is one.
    """
    if data is None:
        data = event.model_dump(exclude_none=True, mode="json")
    parts = list(event.content.parts or []) if event.content else []
    calls = [p.function_call for p in parts if p.function_call]
    responses = [p.function_response for p in parts if p.function_response]
    texts = [p.text for p in parts if p.text and not p.thought]
    thoughts = [p.text for p in parts if p.text and p.thought]
    human = event.author == "user"
    if human:
        actor, actor_kind = _identifier(user_actor, "user"), ActorKind.HUMAN
    elif agent is not None:
        actor = agent.actor
        actor_kind = ActorKind.AGENT if ActorKind.AGENT in agent.actor_kinds else agent.default_kind
    else:
        actor, actor_kind = _identifier(event.author, "agent"), ActorKind.AGENT
    call_id = ""
    if calls:
        kind, call_id = ActumKind.TOOL_REQUEST, calls[0].id or ""
        text = "\n".join(f"{c.name}({json.dumps(c.args or {}, default=str)})" for c in calls)
    elif responses:
        kind, call_id = ActumKind.TOOL_RESPONSE, responses[0].id or ""
        text = "\n".join(
            f"{r.name} -> {json.dumps(r.response or {}, default=str)}" for r in responses
        )
    elif thoughts and not texts:
        kind, text = ActumKind.THOUGHT, "\n".join(thoughts)
    else:
        kind, text = ActumKind.MESSAGE, "\n".join(texts) or _summary(event, parts)
    return Actum(
        chronicum_id=chronicum,
        kind=kind,
        actor_kind=actor_kind,
        actor=actor,
        content=text,
        call_id=_identifier(call_id, ""),
        data=data,
    )


def _summary(event: Event, parts: Iterable[types.Part]) -> str:
    """Words for an event without text: what it carries."""
    said = []
    if event.actions.transfer_to_agent:
        said.append(f"transfer to {event.actions.transfer_to_agent}")
    if event.actions.escalate:
        said.append("escalate")
    if event.actions.state_delta:
        said.append("state: " + ", ".join(sorted(event.actions.state_delta)))
    kinds = sorted({name for part in parts for name, value in part if value is not None})
    if kinds:
        said.append("parts: " + ", ".join(kinds))
    return f"({'; '.join(said) or 'event with no content'})"


# What chronica takes as an actor or a call ID: at most 255 characters, no control
# character (C0, DEL, C1), nothing no database keeps (a NUL, a lone surrogate).
_UNFIT = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _identifier(value: str, fallback: str) -> str:
    """``value`` if chronica takes it as an actor or a call ID, else ``fallback``."""
    if not isinstance(value, str) or len(value) > 255 or _UNFIT.search(value):
        return fallback
    return value or fallback
