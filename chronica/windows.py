"""Cutting a context window in Python: the reference the SQL of ``DjangoStore`` must
agree with, used by ``InMemoryStore`` and for stores that cannot cut one themselves."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import attrgetter

from .errors import InvalidQuery
from .validation.jsondata import dumps_data
from .values import FILTERS, ActaQuery, Actum, ActumKind

__all__ = [
    "compacted_view",
    "cut_page",
    "cut_window",
    "keep_whole_tool_calls",
    "matcher",
    "passes",
]


def passes(actum: Actum, query: ActaQuery) -> bool:
    """Whether ``actum`` passes every filter of the query (what the store's SQL keeps)."""
    return matcher(query)(actum)


def matcher(query: ActaQuery) -> Callable[[Actum], bool]:
    """:func:`passes` for one query, the filters it sets looked up once."""
    tests = [
        (attrgetter(f.attribute), values) for f in FILTERS if (values := getattr(query, f.field))
    ]
    return lambda actum: all(get(actum) in values for get, values in tests)


def cut_window(
    acta: Sequence[Actum], query: ActaQuery, count: Callable[[Actum], int]
) -> list[Actum]:
    """The window of ``query`` from all acta of a chronicum in write order.

    Before ``query.before`` (an ``InvalidQuery`` if no actum has that ID), filtered,
    then the newest acta, at most ``last_n`` (``<= 0``: all), and with ``max_tokens``
    only as many as fit, ``count(actum)`` tokens each, stopping at the first that
    does not. Oldest first.
    """
    return _cut(acta, query, count)[0]


def cut_page(
    acta: Sequence[Actum], query: ActaQuery, count: Callable[[Actum], int]
) -> tuple[list[Actum], bool]:
    """:func:`cut_window`, and whether an actum older than the window's oldest passes
    the filters (``False`` for an empty window): ``BaseStore.window``."""
    window, oldest = _cut(acta, query, count)
    keep = matcher(query)
    more = bool(window) and any(keep(actum) for actum in acta[:oldest])
    return window, more


def _cut(
    acta: Sequence[Actum], query: ActaQuery, count: Callable[[Actum], int]
) -> tuple[list[Actum], int]:
    """The window, and the position in ``acta`` of its oldest actum."""
    end = len(acta)
    if query.before is not None:
        end = next((i for i, a in enumerate(acta) if a.id == query.before), -1)
        if end < 0:
            raise InvalidQuery(f"before={query.before!r} is not an actum of this chronicum")
    window: list[Actum] = []
    oldest = end
    budget = query.max_tokens
    keep = matcher(query)
    room = query.max_bytes
    for position in range(end - 1, -1, -1):
        if query.last_n > 0 and len(window) == query.last_n:
            break
        actum = acta[position]
        if not keep(actum):
            continue
        if budget is not None:
            budget -= count(actum)
            if budget < 0:
                break
        if room is not None:
            room -= size(actum)
            if room < 0 and window:
                break
        window.append(actum)
        oldest = position
    window.reverse()
    return window, oldest


def compacted_view(acta: Sequence[Actum]) -> list[Actum]:
    """The compacted view of ``acta`` (all of a chronicum, in write order): the newest
    compaction's acta (the compaction acta of its moment, ``at``), then the acta
    recorded after its ``through`` that belong to no compaction, in write order. With no
    compaction, every actum. A ``through`` no longer there (purged) stands before every
    actum."""
    newest = next((actum for actum in reversed(acta) if actum.compacts), None)
    if newest is None:
        return list(acta)
    through = next((i for i, actum in enumerate(acta) if actum.id == newest.compacts), -1)
    after = acta[through + 1 :]
    batch = [actum for actum in after if actum.compacts and actum.at == newest.at]
    return batch + [actum for actum in after if not actum.compacts]


def size(actum: Actum) -> int:
    """What an actum weighs against ``ActaQuery.max_bytes``: UTF-8 bytes of its content
    and of its data as stored JSON."""
    data = 0 if actum.data is None else len(dumps_data(actum.data).encode())
    return len(actum.content.encode()) + data


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
