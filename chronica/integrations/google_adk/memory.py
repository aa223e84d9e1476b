"""Google ADK memory on chronica: ``ChronicaMemoryService``.

ADK's memory answers "what did this user say in earlier sessions?". In chronica every
session's events are already acta, indexed by the database as they are written, so
there is nothing to copy into a memory: ``add_session_to_memory`` only checks that the
session is there, and ``search_memory`` searches the user's (the owner's) messages in
that app's sessions with ``services.search_acta``::

    runner = Runner(
        app_name="dinner",
        agent=concierge,
        session_service=ChronicaSessionService(),
        memory_service=ChronicaMemoryService(),
    )

A query is read as ADK's own memory services read it: its words, any of which may
match; the memories that match the most of them come first (ties: the better search
rank), at most ``max_results``. Unlike ADK's in-memory service, a word is found only
whole: the databases keep a run of Japanese or Chinese as one word, so a part of it
is not found.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from google.adk.memory.base_memory_service import BaseMemoryService, SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry

from chronica import ActumKind, services

from .events import event_of

if TYPE_CHECKING:
    from google.adk.events.event import Event
    from google.adk.sessions.session import Session

__all__ = ["ChronicaMemoryService"]

_MOST_WORDS = 32
"""The most words of a query that are searched for (the first ones)."""

_WORD = re.compile(r"[^\W_]+")


def _words(text: str) -> list[str]:
    # As search splits text into words: runs of letters and digits, composed, lowercase.
    return _WORD.findall(unicodedata.normalize("NFC", text).lower())


class ChronicaMemoryService(BaseMemoryService):
    """An ADK ``BaseMemoryService`` on chronica's configured store and its search.

    ``search_memory(app_name=, user_id=, query=)`` finds the messages of ``user_id``'s
    sessions of ``app_name`` (the chronica whose state is in the app's namespace, as
    ``ChronicaSessionService`` keeps them, with either ``session_ids``) that hold any
    word of ``query``: a ``MemoryEntry`` for each, the event's content, author, ID
    and time (ISO 8601). Never another user's, never another app's.

    ``add_session_to_memory`` and ``add_events_to_memory`` write nothing: the events a
    ``ChronicaSessionService`` appended are stored and searchable already, and a
    session added twice is the same session. ``max_results``: at most this many
    memories a search (ADK's in-memory service: 10).
    """

    def __init__(self, *, max_results: int = 10) -> None:
        if isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 1:
            raise ValueError(f"max_results must be a positive int, not {max_results!r}")
        self.max_results = max_results

    def __repr__(self) -> str:
        return f"<ChronicaMemoryService max_results={self.max_results}>"

    async def add_session_to_memory(self, session: Session) -> None:
        """Nothing to do: the session's events are acta, searchable as they were written."""

    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Nothing to do, as for ``add_session_to_memory``."""

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        words = list(dict.fromkeys(_words(query or "")))
        words = words[:_MOST_WORDS]
        if not words or not user_id:
            return SearchMemoryResponse()
        from . import namespace

        # Each word also decomposed (NFD): the databases compare text as it was stored.
        spelt = dict.fromkeys(
            form for word in words for form in (word, unicodedata.normalize("NFD", word))
        )
        hits = await services.asearch_acta(
            user_id,
            " or ".join(f'"{form}"' for form in spelt),
            namespace=namespace(app_name),
            kinds=[ActumKind.MESSAGE],
            limit=max(50, 5 * self.max_results),
        )
        wanted = set(words)
        scored: list[tuple[int, float, MemoryEntry]] = []
        for hit in hits:
            event = event_of(hit.actum)
            if event.content is None or not event.content.parts:
                continue
            text = " ".join(part.text for part in event.content.parts if part.text)
            # As ADK's own services: the words of the event's text that the query has.
            matched = len(wanted & set(_words(text)))
            if matched:
                memory = MemoryEntry(
                    id=event.id,
                    content=event.content,
                    author=event.author,
                    timestamp=dt.datetime.fromtimestamp(event.timestamp).isoformat(),
                )
                scored.append((matched, hit.rank, memory))
        scored.sort(key=lambda entry: (-entry[0], -entry[1]))
        return SearchMemoryResponse(memories=[memory for *_, memory in scored[: self.max_results]])
