"""LangGraph on chronica (extra ``chronica[langgraph]``), a Django app of its own: add
``"chronica.integrations.langgraph"`` to ``INSTALLED_APPS`` and ``migrate``.

* :class:`ChronicaSaver`: a LangGraph checkpointer whose threads are chronica's
  sessions; the graph's messages are recorded as acta that every agent reads.
* :class:`ChronicaStore`: a LangGraph store of one owner's long-term memory.
* :func:`erase_owner_rows`: delete one owner's LangGraph rows (for
  ``chronica.signals.owner_erased``).

The names are imported on first use: Django imports this package (the app) before
its models may be.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .rows import erase_owner_rows
    from .saver import CheckpointConflict, ChronicaSaver
    from .store import ChronicaStore

__all__ = ["CheckpointConflict", "ChronicaSaver", "ChronicaStore", "erase_owner_rows"]

_WHERE = {
    "CheckpointConflict": ".saver",
    "ChronicaSaver": ".saver",
    "ChronicaStore": ".store",
    "erase_owner_rows": ".rows",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name], __name__), name)
