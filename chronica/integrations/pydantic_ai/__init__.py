"""PydanticAI on chronica (extra ``chronica[pydantic-ai]``).

* :class:`ChronicaConversationStore`: a PydanticAI ``ConversationStore`` whose
  conversations are chronica's sessions. Its records live in this Django app's tables:
  add ``"chronica.integrations.pydantic_ai"`` to ``INSTALLED_APPS`` and ``migrate``.
* :class:`ChronicaHistory`: a PydanticAI agent's turn in a session other agents share
  (the OpenAI Agents SDK's, Google ADK's, the API's): its window as
  ``message_history=``, its new messages recorded back. It needs no tables of its own.

The names are imported on first use: Django imports this package (the app) at every
start, and PydanticAI takes a second to import, which a worker, a server or a
management command that never runs an agent should not pay.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .history import ChronicaHistory
    from .messages import actum_of, message_of
    from .store import ChronicaConversationStore

__all__ = ["ChronicaConversationStore", "ChronicaHistory", "actum_of", "message_of"]

_WHERE = {
    "ChronicaConversationStore": ".store",
    "ChronicaHistory": ".history",
    "actum_of": ".messages",
    "message_of": ".messages",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name], __name__), name)
