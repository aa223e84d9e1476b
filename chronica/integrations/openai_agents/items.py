"""An OpenAI Agents SDK item and an actum, each way: the kind, the actor, the call ID, a
readable projection in ``content`` and the whole item in ``data``."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, cast

from agents.items import TResponseInputItem

from ... import ActorKind, Actum, ActumKind, InvalidActum

__all__ = ["CONTENT_LIMIT", "actor_name", "actum_from_item", "is_item", "item_from_actum"]

CONTENT_LIMIT = 10_000
"""The most characters of an item's readable projection kept in ``content``;
the whole item stays in ``data``."""

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
            actor_kind, actor_name(role, "system")
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
    if is_item(actum.data):
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


def is_item(data: object) -> bool:
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


def actor_name(name: object, fallback: str) -> str:
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
