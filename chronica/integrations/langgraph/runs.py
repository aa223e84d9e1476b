"""What a run of a graph carries from call to call: the checkpoints it takes to be
the newest of each thread (``ChronicaSaver``'s rule against silent forks), and the
asyncio methods' way into asgiref's thread for sync code."""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from asgiref.sync import sync_to_async

from .rows import keeping_connections

__all__ = ["in_sync_thread", "run_heads"]

_T = TypeVar("_T")

# What this run (this context and the copies LangGraph's tasks run in: one dict, shared)
# takes to be the newest checkpoint of each (thread, namespace): the one it read as the
# newest, or put last. A put on that checkpoint extends the line the run follows, and
# only one writer may; a put on any other checkpoint is a branch on purpose (LangGraph
# resuming or replaying from a checkpoint it was given).
_heads: contextvars.ContextVar[dict[tuple[str, str], str]] = contextvars.ContextVar(
    "chronica_langgraph_heads"
)


def run_heads() -> dict[tuple[str, str], str]:
    """The run's heads (see ``_heads``), made in this context if it has none."""
    heads = _heads.get(None)
    if heads is None:
        heads = {}
        _heads.set(heads)
    return heads


def in_sync_thread(call: Callable[..., _T]) -> Callable[..., Awaitable[_T]]:
    """``call`` in asgiref's thread for sync code, whose connection is kept."""

    run_heads()  # here, in the caller's context: the thread's copy shares it

    def run(*args: Any, **kwargs: Any) -> _T:
        token = keeping_connections.set(True)
        try:
            return call(*args, **kwargs)
        finally:
            keeping_connections.reset(token)

    return sync_to_async(run)
