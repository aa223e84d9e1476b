"""The in-memory store's search: words compared in Python, every actum of the owner read."""

from __future__ import annotations

import copy

from ...search import SearchQuery, snippet, text_of, words_of
from ...values import ActaQuery, Actum, SearchHit
from ...windows import matcher
from .entry import MemoryBase

__all__ = ["SearchMixin"]


class SearchMixin(MemoryBase):
    def search(
        self,
        owner_id: str,
        query: SearchQuery,
        filters: ActaQuery,
        *,
        chronica: frozenset[str] | None = None,
        limit: int = 20,
        offset: int = 0,
        namespace: str | None = None,
    ) -> list[SearchHit]:
        with self._lock:
            entries = [
                e
                for e in self._entries.values()
                if e.chronicum.owner_id == owner_id
                and (chronica is None or e.chronicum.id in chronica)
                and (namespace is None or e.namespace == namespace)
            ]
        keep = matcher(filters)
        found: list[tuple[float, int, Actum, str]] = []
        for entry in entries:
            with entry.lock:
                pairs = list(zip(entry.acta, entry.positions, strict=True))
            for actum, position in pairs:
                if not keep(actum):
                    continue
                text = text_of(actum.content, actum.data)
                words = words_of(text)
                if query.matches(words):
                    found.append((query.count(words) / (1 + len(words)), position, actum, text))
        found.sort(key=lambda hit: (-hit[0], -hit[1]))
        return [
            SearchHit(copy.deepcopy(actum), rank, snippet(text, query))
            for rank, _position, actum, text in found[offset : offset + limit]
        ]
