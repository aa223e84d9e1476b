"""OpenAI Agents SDK memory on chronica: :class:`ChronicaSession`.

``pip install "chronica[openai-agents]"``, then hand a session to the runner::

    from agents import Agent, Runner
    from chronica.integrations.openai_agents import ChronicaSession

    session = ChronicaSession("dinner-friday", owner_id="ardian")
    result = await Runner.run(concierge, "A quiet table for four?", session=session)

Every agent of the run, handoffs included, remembers into the one chronicum
``session_id`` of ``owner_id``; the admin, the API and agents of other frameworks
read the same acta. How an SDK item becomes an actum:

* one item is one actum, so the SDK's ``limit`` and chronica's ``last_n`` count
  the same thing, and a turn is recorded as one batch: it lands whole and
  contiguous, or not at all;
* ``data`` is the item itself, and :meth:`ChronicaSession.get_items` gives it back
  equal to what was added;
* ``kind``: a message is a message, reasoning and compaction are thoughts, a tool
  call (function, custom, computer, shell, MCP, hosted tools, an MCP approval
  request) is a tool request, its output (or approval answer) a tool response;
* ``call_id``: the item's ``call_id`` (an MCP approval pair is linked by its
  request's ID), so ``get_acta(whole_tool_calls=True)`` keeps calls and outputs
  together;
* ``actor``: a user message is ``user_actor`` (the owner by default); system and
  developer messages are system acta under their role; everything the model or
  its tools produced is the agent that ran: the runner saves each turn inside
  that agent's span of ``agents.tracing`` (kept even with tracing disabled), and
  the session reads the name there; outside a run it is ``default_agent``;
* ``content``: a readable projection of the item (the text, the tool name and
  arguments, the output), cut at :data:`CONTENT_LIMIT` characters, for people and
  for agents that read text.

An actum recorded by someone other than a ChronicaSession (the API, another
framework) has no SDK item in ``data``: it reads back as a plain message of its
content, so that an SDK agent sees what the others said.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Awaitable, Mapping
from typing import Any, TypeVar, cast

from agents.items import TResponseInputItem
from agents.memory.session_settings import (
    SessionSettings,
    coerce_session_settings,
    resolve_session_limit,
)
from agents.tracing import AgentSpanData, get_current_span

from ... import ActorKind, Actum, ActumKind, ChronicumNotFound, InvalidActum, InvalidQuery, services
from .compaction import CompactionHooks, is_cleared

__all__ = ["CONTENT_LIMIT", "ChronicaSession", "actum_from_item", "item_from_actum"]

CONTENT_LIMIT = 10_000
"""The most characters of an item's readable projection kept in ``content``;
the whole item stays in ``data``."""

_T = TypeVar("_T")

_THOUGHTS = frozenset({"reasoning", "compaction"})
_TOOL_REQUESTS = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "computer_call",
        "shell_call",
        "local_shell_call",
        "apply_patch_call",
        "file_search_call",
        "web_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "tool_search_call",
        "mcp_call",
        "mcp_approval_request",
        "program",
    }
)
_TOOL_RESPONSES = frozenset(
    {
        "function_call_output",
        "custom_tool_call_output",
        "computer_call_output",
        "shell_call_output",
        "local_shell_call_output",
        "apply_patch_call_output",
        "tool_search_output",
        "mcp_list_tools",
        "mcp_approval_response",
        "program_output",
    }
)
_ROLE_ACTOR_KINDS = {
    "user": ActorKind.HUMAN,
    "assistant": ActorKind.AGENT,
    "system": ActorKind.SYSTEM,
    "developer": ActorKind.SYSTEM,
}
_ACTOR_KIND_ROLES = {ActorKind.HUMAN: "user", ActorKind.AGENT: "assistant"}
_NO_CALL_ID = frozenset({ActumKind.MESSAGE, ActumKind.THOUGHT})
# Fields of an item that say nothing to a reader of its projection.
_PLUMBING = frozenset({"type", "id", "status", "call_id", "caller"})
# A NUL or a lone surrogate is text no database keeps; an actor or a call ID must
# also be free of control characters (C0, DEL and C1: the range chronica refuses).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_ID_LIMIT = 255
# What a session's window may filter by, as ``services.get_acta`` names it.
_WINDOW_OPTIONS = frozenset({"kinds", "actor_kinds", "actors", "max_tokens", "whole_tool_calls"})


class ChronicaSession(CompactionHooks):
    """An OpenAI Agents SDK ``Session`` whose history is the chronicum ``session_id``
    of ``owner_id``.

    ``get_items(limit)`` returns the last ``limit`` items, oldest first (``None``:
    ``session_settings.limit``, or all; ``0``: none); ``add_items`` records the
    items as one batch; ``pop_item`` removes and returns the newest item;
    ``clear_session`` deletes the chronicum only where all of it is this session's (else
    it hides the session's history; ``.compaction``, with the SDK's
    compaction hooks: one ``compact``, and the session reads the compacted window).

    The owner rule of chronica holds: a chronicum that belongs to someone else reads
    as empty, ``pop_item`` finds nothing in it and ``clear_session`` leaves it alone,
    exactly as for a chronicum that does not exist, and ``add_items`` raises
    ``ChronicumNotFound``. An item no chronica store can keep (not JSON, a NUL
    character, over ``CHRONICA["MAX_ACTUM_BYTES"]``) raises ``InvalidActum`` and
    nothing of the batch is written. A write that the caller cancels still settles
    (the batch lands whole or not at all) before the cancellation is raised.

    ``user_actor`` is the actor of user messages (default: ``owner_id``);
    ``default_agent`` the actor of model and tool items written outside a run.

    ``window``: the part of the chronicum the agent reads, as keyword arguments of
    ``services.get_acta`` (``kinds``, ``actor_kinds``, ``actors``, ``max_tokens``,
    ``whole_tool_calls``); ``limit`` still cuts it to the last items. Acta that other
    frameworks or the API recorded into the same chronicum read back as plain messages
    (:func:`item_from_actum`). A ``limit`` that is not an int is ``InvalidQuery``.

    ``identity``: where the session runs in an agent service, the agent's credential
    (``services.authenticate_credential(secret)``): every call then keeps its rules
    (it writes only as its agent, so a user item is ``NotPermitted``; ``pop_item`` and
    ``clear_session`` only if the credential allows them), ``owner_id`` defaults to
    the credential's owner, and the items it writes are attested
    (docs/agent-credentials.md).
    """

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        session_id: str,
        *,
        owner_id: str | None = None,
        session_settings: SessionSettings | Mapping[str, Any] | None = None,
        user_actor: str | None = None,
        default_agent: str = "assistant",
        identity: services.Identity | None = None,
        window: Mapping[str, Any] | None = None,
    ) -> None:
        window = dict(window or {})
        if unknown := set(window) - _WINDOW_OPTIONS:
            takes, given = ", ".join(sorted(_WINDOW_OPTIONS)), ", ".join(sorted(unknown))
            raise TypeError(f"window takes {takes}, not {given}")
        self.window = window
        if owner_id is None:
            if identity is None:
                raise TypeError("ChronicaSession needs an owner_id (or an identity)")
            owner_id = identity.owner_id
        self.session_id = session_id
        self.owner_id = owner_id
        self.identity = identity
        self.session_settings = (
            SessionSettings()
            if session_settings is None
            else coerce_session_settings(cast(Any, session_settings))
        )
        self.user_actor = owner_id if user_actor is None else user_actor
        self.default_agent = default_agent

    @property
    def _calls(self) -> Any:
        # The configured Chronicarius, acting as the identity if there is one.
        return services if self.identity is None else services.acting_as(self.identity)

    def __repr__(self) -> str:
        return f"<ChronicaSession {self.session_id!r} of {self.owner_id!r}>"

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The last ``limit`` items, oldest first, each as it was added."""
        resolved = resolve_session_limit(_limit(limit), self.session_settings)
        resolved = _limit(resolved)
        if resolved == 0:
            return []
        # Like the SDK's SQLiteSession, a negative limit is no limit.
        last_n = resolved if resolved is not None and resolved > 0 else 0
        try:
            acta = await self._calls.aget_acta(
                self.owner_id, self.session_id, last_n=last_n, compacted=True, **self.window
            )
        except ChronicumNotFound:
            return []
        return [item_from_actum(actum) for actum in acta if not is_cleared(actum)]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Record ``items`` as one batch: all land, one after the other, or none."""
        if not items:
            return
        agent = self._running_agent()
        acta = [
            actum_from_item(
                item,
                chronicum_id=self.session_id,
                user_actor=self.user_actor,
                agent=agent,
            )
            for item in items
        ]
        await _settled(self._calls.arecord_acta(self.owner_id, acta))

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the newest item; ``None`` when there is none."""
        newest = await self._view(last_n=1)
        if not newest or is_cleared(newest[0]):
            return None  # (the marker of a cleared history is no item, and stays)
        try:
            actum = await _settled(self._calls.apop_actum(self.owner_id, self.session_id))
        except ChronicumNotFound:
            return None
        return None if actum is None else item_from_actum(actum)

    async def clear_session(self) -> None:
        """Delete the chronicum and every item in it where all of them are this
        session's; else hide them from this session by a compaction of no items."""

        async def delete() -> None:
            with contextlib.suppress(ChronicumNotFound):
                await self._calls.adelete_chronicum(self.owner_id, self.session_id)

        await _settled(self._clear_or_hide(delete))

    def _to_actum(self, item: Any) -> Actum:
        agent = self._running_agent()
        return actum_from_item(
            item, chronicum_id=self.session_id, user_actor=self.user_actor, agent=agent
        )

    def _to_item(self, actum: Actum) -> TResponseInputItem:
        return item_from_actum(actum)

    def _is_own(self, actum: Actum) -> bool:
        return _is_item(actum.data) or is_cleared(actum)

    def _running_agent(self) -> str:
        # The runner hands a session no agent (the run context it can pass carries none),
        # but it saves every turn while the span of the agent that ran it is current,
        # with tracing on or off.
        span = get_current_span()
        span_data = span.span_data if span is not None else None
        if isinstance(span_data, AgentSpanData):
            return _actor(span_data.name, self.default_agent)
        return self.default_agent


def _limit(limit: object) -> int | None:
    if limit is None or (isinstance(limit, int) and not isinstance(limit, bool)):
        return limit
    raise InvalidQuery(f"limit must be an int or None, not {type(limit).__name__}")


def actum_from_item(
    item: TResponseInputItem | Mapping[str, Any],
    *,
    chronicum_id: str,
    user_actor: str,
    agent: str,
) -> Actum:
    """The actum that records one SDK item (see the module's docstring for the rules)."""
    if not isinstance(item, Mapping):
        raise InvalidActum(f"an item must be a JSON object, not {type(item).__name__}")
    try:
        # A copy taken now: the runner may change its dicts while the write waits for
        # its thread, and the stored item must be the one that was added.
        data = json.loads(json.dumps(item, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise InvalidActum(f"the item is not JSON: {exc}") from exc
    item_type = _item_type(data)
    kind = _kind(item_type)
    role = data.get("role")
    actor_kind: ActorKind
    if isinstance(role, str):
        actor_kind = _ROLE_ACTOR_KINDS.get(role, ActorKind.SYSTEM)
        actor = {ActorKind.HUMAN: user_actor, ActorKind.AGENT: agent}.get(
            actor_kind, _actor(role, "system")
        )
    elif kind == ActumKind.MESSAGE:
        # An item reference or a configuration item: the SDK's, not a person's.
        actor_kind, actor = ActorKind.SYSTEM, "openai-agents"
    else:
        actor_kind, actor = ActorKind.AGENT, agent
    content = _clean(_projection(item_type, data))
    if not content and kind in (ActumKind.MESSAGE, ActumKind.THOUGHT):
        content = f"({item_type})"
    return Actum(
        chronicum_id=chronicum_id,
        kind=kind,
        actor_kind=actor_kind,
        actor=actor,
        content=content,
        call_id=_call_id(item_type, data) if kind not in _NO_CALL_ID else "",
        data=data,
    )


def item_from_actum(actum: Actum) -> TResponseInputItem:
    """The SDK item an actum holds, or a plain message of its content when it holds none
    (an actum of the API, or of another framework, whose ``data`` is that framework's).
    A redacted actum is the SDK's empty equivalent: an empty message, or for a tool call
    an empty call or output under the same call ID, so that its pair stays whole."""
    if actum.redacted is not None:
        return _redacted_item(actum)
    if _is_item(actum.data):
        return cast(TResponseInputItem, actum.data)
    role = _ACTOR_KIND_ROLES.get(actum.actor_kind, "system")
    return cast(TResponseInputItem, {"role": role, "content": actum.content})


def _redacted_item(actum: Actum) -> TResponseInputItem:
    if actum.call_id and actum.kind is ActumKind.TOOL_REQUEST:
        item: dict[str, Any] = {
            "type": "function_call",
            "call_id": actum.call_id,
            "name": "redacted",
            "arguments": "{}",
        }
    elif actum.call_id and actum.kind is ActumKind.TOOL_RESPONSE:
        item = {"type": "function_call_output", "call_id": actum.call_id, "output": ""}
    else:
        item = {"role": _ACTOR_KIND_ROLES.get(actum.actor_kind, "system"), "content": ""}
    return cast(TResponseInputItem, item)


def _is_item(data: object) -> bool:
    """Whether ``data`` is what a session added: any JSON object (an SDK item, or what a
    session wrapper such as the SDK's encrypted session stored), except the data
    another framework keeps in a chronicum it shares: an ADK event (its ``author`` and
    ``invocation_id``) or a PydanticAI message (its ``kind`` and ``parts``)."""
    if not isinstance(data, dict):
        return False
    if "author" in data and "invocation_id" in data:
        return False
    return not (data.get("kind") in ("request", "response") and isinstance(data.get("parts"), list))


def _item_type(item: Mapping[str, Any]) -> str:
    item_type = item.get("type")
    if isinstance(item_type, str) and item_type:
        return item_type
    # The SDK's easy input message and item reference may leave out their type.
    if "role" in item:
        return "message"
    if "id" in item:
        return "item_reference"
    return "item"


def _kind(item_type: str) -> ActumKind:
    if item_type in _THOUGHTS:
        return ActumKind.THOUGHT
    if item_type in _TOOL_REQUESTS or item_type.endswith("_call"):
        return ActumKind.TOOL_REQUEST
    if item_type in _TOOL_RESPONSES or item_type.endswith(("_output", "_response")):
        return ActumKind.TOOL_RESPONSE
    return ActumKind.MESSAGE


def _call_id(item_type: str, item: Mapping[str, Any]) -> str:
    if item_type == "mcp_approval_request":
        call_id = item.get("id")
    elif item_type == "mcp_approval_response":
        call_id = item.get("approval_request_id")
    elif item_type == "local_shell_call_output":
        call_id = item.get("id")  # the ID of its call: this output type has no call_id
    else:
        call_id = item.get("call_id")
    # A call ID no store can index still travels in data; it just links nothing.
    if (
        not isinstance(call_id, str)
        or len(call_id) > _ID_LIMIT
        or _CONTROL.search(call_id) is not None
        or _UNSTORABLE.search(call_id) is not None
    ):
        return ""
    return call_id


def _actor(name: object, fallback: str) -> str:
    if not isinstance(name, str):
        return fallback
    return _UNSTORABLE.sub("", _CONTROL.sub("", name))[:_ID_LIMIT] or fallback


def _clean(text: str) -> str:
    text = _UNSTORABLE.sub("\ufffd", text)
    if len(text) > CONTENT_LIMIT:
        return text[: CONTENT_LIMIT - 1] + "…"
    return text


def _projection(item_type: str, item: Mapping[str, Any]) -> str:
    """What a person reads of an item: its text, the tool and its arguments, the output."""
    if item_type == "message":
        return _text(item.get("content"))
    if item_type == "reasoning":
        text = _text(item.get("summary")) or _text(item.get("content"))
        if text:
            return text
        return "(encrypted reasoning)" if item.get("encrypted_content") else ""
    if item_type == "compaction":
        return "(compacted history)"
    if item_type in ("function_call", "tool_search_call"):
        return _joined(item.get("name"), item.get("arguments"))
    if item_type == "custom_tool_call":
        return _joined(item.get("name"), item.get("input"))
    if item_type in ("mcp_call", "mcp_approval_request"):
        name = f"{item.get('server_label', '')}.{item.get('name', '')}"
        call = _joined(name, item.get("arguments"))
        output = item.get("output") or item.get("error")
        return f"{call} -> {_text(output)}" if output else call
    if item_type == "mcp_approval_response":
        verdict = "approved" if item.get("approve") else "denied"
        return _joined(verdict, item.get("reason"))
    if item_type == "mcp_list_tools":
        tools = item.get("tools") or []
        names = ", ".join(t.get("name", "") for t in tools if isinstance(t, dict))
        return f"{item.get('server_label', '')}: {names}"
    if item_type == "program":
        return _text(item.get("code"))
    if item_type == "program_output":
        return _text(item.get("result"))
    if "output" in item:
        return _text(item["output"])
    if item_type == "item_reference":
        return f"(item_reference {item.get('id', '')})"
    rest = {key: value for key, value in item.items() if key not in _PLUMBING}
    return _joined(item_type, _compact(rest) if rest else "")


def _text(value: object) -> str:
    """The text of a message's content, a summary or an output: a string or a list of parts."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(text for text in (_part_text(part) for part in value) if text)
    if isinstance(value, dict):
        return _part_text(value)
    return _compact(value)


def _part_text(part: object) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return _compact(part)
    for key in ("text", "refusal", "transcript"):
        if isinstance(part.get(key), str):
            return cast(str, part[key])
    part_type = str(part.get("type", "part"))
    if part_type in ("input_image", "computer_screenshot", "image"):
        return "[image]"
    if part_type in ("input_file", "file"):
        name = part.get("filename") or part.get("file_id")
        return f"[file {name}]" if name else "[file]"
    if part_type == "input_audio":
        return "[audio]"
    if "stdout" in part or "stderr" in part:
        return "\n".join(str(part.get(key) or "") for key in ("stdout", "stderr")).strip()
    return _compact(part)


def _joined(head: object, tail: object) -> str:
    parts = [_text(head), _text(tail)]
    return " ".join(part for part in parts if part)


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


async def _settled(awaitable: Awaitable[_T]) -> _T:
    """Await a write to its outcome even if the caller is cancelled meanwhile.

    The write runs in a thread that a cancellation cannot stop: returning early
    would let the caller believe nothing was written while the batch lands behind
    its back. The cancellation is raised once the outcome is known.
    """
    task = asyncio.ensure_future(awaitable)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError as exc:
            cancelled = cancelled or exc
    if cancelled is not None:
        if not task.cancelled():
            task.exception()  # retrieved, so that the loop does not log it as lost
        raise cancelled
    return task.result()
