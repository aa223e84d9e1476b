"""What a run of a graph carries from call to call (``ChronicaSaver``'s rule against
silent forks), and the asyncio methods' way into asgiref's thread for sync code."""

from __future__ import annotations

import contextvars
import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from asgiref.sync import sync_to_async

from .rows import keeping_connections

__all__ = ["Run", "in_sync_thread", "this_run"]

_T = TypeVar("_T")


@dataclasses.dataclass
class Run:
    """What one run of a graph (this context and the copies LangGraph's tasks run in:
    one object, shared) knows of the threads it writes.

    ``heads``: the checkpoint of each (thread, namespace) it takes to be the newest,
    the one it read as the newest or put last. A put on that checkpoint extends the
    line the run follows, and only one writer may; a put on any other checkpoint is a
    branch on purpose (LangGraph resuming or replaying from a checkpoint it was given).
    ``written``: the checkpoints it put, so that a sibling of its own (LangGraph's
    subgraphs sharing a namespace within one run) is not taken for another writer's.
    """

    heads: dict[tuple[str, str], str] = dataclasses.field(default_factory=dict)
    written: set[str] = dataclasses.field(default_factory=set)

    def wrote(self, thread_id: str, checkpoint_ns: str, checkpoint_id: str) -> None:
        if len(self.written) > _REMEMBERED:
            self.written.clear()
        self.written.add(checkpoint_id)
        self.heads[(thread_id, checkpoint_ns)] = checkpoint_id


# A run that writes more checkpoints than this forgets the oldest it wrote.
_REMEMBERED = 100_000
_run: contextvars.ContextVar[Run] = contextvars.ContextVar("chronica_langgraph_run")


def this_run() -> Run:
    """The run of this context (see :class:`Run`), begun here if it has none."""
    run = _run.get(None)
    if run is None:
        run = Run()
        _run.set(run)
    return run


def in_sync_thread(call: Callable[..., _T]) -> Callable[..., Awaitable[_T]]:
    """``call`` in asgiref's thread for sync code, whose connection is kept."""

    this_run()  # here, in the caller's context: the thread's copy shares it

    def run(*args: Any, **kwargs: Any) -> _T:
        token = keeping_connections.set(True)
        try:
            return call(*args, **kwargs)
        finally:
            keeping_connections.reset(token)

    return sync_to_async(run)
