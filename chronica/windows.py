"""Cutting a context window in Python: the reference the SQL of ``DjangoStore`` must
agree with, used by ``InMemoryStore`` and for stores that cannot cut one themselves."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .errors import InvalidQuery
from .values import ActaQuery, Actum, ActumKind

__all__ = ["cut_window", "keep_whole_tool_calls", "passes"]


def passes(actum: Actum, query: ActaQuery) -> bool:
    """Whether ``actum`` passes the query's kind and actor-kind filters."""
    return (not query.kinds or actum.kind in query.kinds) and (
        not query.actor_kinds or actum.actor_kind in query.actor_kinds
    )


def cut_window(
    acta: Sequence[Actum], query: ActaQuery, count: Callable[[Actum], int]
) -> list[Actum]:
    """The window of ``query`` from all acta of a chronicum in write order.

    Before ``query.before`` (an ``InvalidQuery`` if no actum has that ID), filtered,
    then the newest acta, at most ``last_n`` (``<= 0``: all), and with ``max_tokens``
    only as many as fit, ``count(actum)`` tokens each, stopping at the first that
    does not. Oldest first.
    """
    end = len(acta)
    if query.before is not None:
        end = next((i for i, a in enumerate(acta) if a.id == query.before), -1)
        if end < 0:
            raise InvalidQuery(f"before={query.before!r} is not an actum of this chronicum")
    window: list[Actum] = []
    budget = query.max_tokens
    for actum in reversed(acta[:end]):
        if query.last_n > 0 and len(window) == query.last_n:
            break
        if not passes(actum, query):
            continue
        if budget is not None:
            budget -= count(actum)
            if budget < 0:
                break
        window.append(actum)
    window.reverse()
    return window


def keep_whole_tool_calls(acta: list[Actum]) -> list[Actum]:
    """``acta`` without the tool responses whose tool request (the same non-empty
    ``call_id``) is not among them. A response with no ``call_id`` names no request
    and is kept."""
    requests = {a.call_id for a in acta if a.kind is ActumKind.TOOL_REQUEST and a.call_id}
    return [
        a
        for a in acta
        if not (a.kind is ActumKind.TOOL_RESPONSE and a.call_id and a.call_id not in requests)
    ]
