"""A redacted actum reaches LangGraph's copy of the message that held it.

``ChronicaSaver`` keeps each message of a thread once: its acta, and the message as
LangGraph's serializer wrote it (``chronica_langgraph_messages``), so that a checkpoint reads
back exactly. When ``redact_actum`` empties one of those acta, the stored message is emptied
too: its text, its tool calls' arguments and its extra fields, in place (same row, same
digest: a graph that puts the old message object again finds the row and records nothing
new). Savers of this process forget what they remembered of the thread. Left as they were:
the pending writes of a checkpoint (what a node returned, kept until the thread is pruned or
deleted) and the memory of savers in other processes until their thread changes.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from chronica import Actum

from .models import LangGraphMessage
from .rows import Rows

if TYPE_CHECKING:  # not at app loading: it imports langchain_core
    from .lists import MessageLists

__all__ = ["emptied", "forget_redacted", "track"]

_LISTS: weakref.WeakSet[MessageLists] = weakref.WeakSet()


def track(lists: MessageLists) -> MessageLists:
    """Register a saver's message lists, to be told when a thread's message is redacted."""
    _LISTS.add(lists)
    return lists


def emptied(message: Any) -> Any:
    """The message with nothing of what it said: no text, no tool call arguments, no extra
    fields; its ID, type, name and tool call IDs stay."""
    update: dict[str, Any] = {"content": ""}
    if getattr(message, "additional_kwargs", None):
        update["additional_kwargs"] = {}
    if getattr(message, "tool_calls", None):
        update["tool_calls"] = [{**call, "args": {}} for call in message.tool_calls]
    if getattr(message, "invalid_tool_calls", None):
        update["invalid_tool_calls"] = []
    return message.model_copy(update=update)


def forget_redacted(sender: Any, *, owner_id: str, actum: Actum, **kwargs: Any) -> None:
    """``chronica.signals.actum_redacted``: empty the stored message that held ``actum``."""
    rows = Rows()
    thread = rows.objects(LangGraphMessage).filter(owner_id=owner_id, thread_id=actum.chronicum_id)
    # Most redacted acta are in no thread's message (another framework's, the API's): one
    # read of the messages' acta finds that, with no transaction and no message decoded.
    held = [
        seq
        for seq, ids in thread.order_by().values_list("seq", "actum_ids")
        if actum.id in (ids or [])
    ]
    if not held:
        return

    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    serde = JsonPlusSerializer()

    def rewrite() -> int:
        changed = 0
        for row in thread.filter(seq__in=held).only("seq", "actum_ids", "type", "blob"):
            if actum.id not in (row.actum_ids or []):
                continue
            message = serde.loads_typed((row.type, bytes(row.blob)))
            row.type, row.blob = serde.dumps_typed(emptied(message))
            row.save(update_fields=["type", "blob"])
            changed += 1
        return changed

    if rows.in_transaction(rewrite):
        for lists in list(_LISTS):
            lists.forget([actum.chronicum_id])
