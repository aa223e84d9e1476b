"""Reading: the context window, a page of it, and the chronicum itself."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from ..errors import ChronicumNotFound
from ..validation.identifiers import check_owner
from ..validation.queries import build_query, check_whole_tool_calls
from ..values import ActaPage, ActaQuery, Actum, Chronicum
from ..windows import cut_page, keep_whole_tool_calls
from .base import ActorKinds, ChronicariusBase, Kinds, async_twin

__all__ = ["Reading"]


class Reading(ChronicariusBase):
    """The context window, a page of it, and the chronicum: read owner-checked."""

    def get_acta(
        self,
        owner_id: str,
        chronicum_id: str,
        *,
        kinds: Kinds = None,
        actor_kinds: ActorKinds = None,
        actors: Iterable[str] | str | None = None,
        last_n: int = 0,
        max_tokens: int | None = None,
        whole_tool_calls: bool = False,
        before: str | None = None,
        compacted: bool = False,
    ) -> list[Actum]:
        """The context window, oldest first in write order.

        Filtered by ``kinds``, ``actor_kinds`` and ``actors`` (actor IDs) first;
        then the newest acta that pass, at most ``last_n`` (``<= 0``: all) and, with
        ``max_tokens``, as many as add up to at most that many tokens (the first
        that does not fit ends the window). ``before`` (an actum ID of this
        chronicum) takes the window from the acta recorded before it.
        ``whole_tool_calls`` then leaves out every tool response whose tool request
        (same ``call_id``) is not in the window.
        ``compacted``: the window is read from the newest compaction's acta followed
        by the acta recorded after its ``through`` that belong to no compaction (see
        ``compact``), then filtered and limited as usual.
        A bad argument raises ``InvalidQuery``.
        """
        check_owner(owner_id)
        query = build_query(
            kinds=kinds,
            actor_kinds=actor_kinds,
            actors=actors,
            last_n=last_n,
            max_tokens=max_tokens,
            before=before,
        )
        whole = check_whole_tool_calls(whole_tool_calls)
        query = self._compacted(query, compacted)
        acta = self._window(owner_id, chronicum_id, query)
        return keep_whole_tool_calls(acta) if whole else acta

    def get_acta_page(
        self,
        owner_id: str,
        chronicum_id: str,
        *,
        kinds: Kinds = None,
        actor_kinds: ActorKinds = None,
        actors: Iterable[str] | str | None = None,
        last_n: int = 0,
        max_tokens: int | None = None,
        whole_tool_calls: bool = False,
        before: str | None = None,
        max_bytes: int | None = None,
        raw_data: bool = False,
        compacted: bool = False,
    ) -> ActaPage:
        """The window :meth:`get_acta` answers for the same arguments, and where the
        next, older page starts: ``ActaPage(acta, next_before)``.

        ``next_before`` is the oldest actum the limits kept (``whole_tool_calls``
        may leave it out of ``acta``), when an older actum passes the filters, else
        ``None``: ``get_acta_page(..., before=page.next_before)`` with the same
        arguments is the next page, and following them reads the session backwards,
        every actum once. An empty page has none (a budget that the newest actum
        alone is over ends the walk). Both come from one consistent read (where the
        store ``supports_window``; every store of chronica does).

        ``max_bytes`` (a positive int) cuts the page early where the UTF-8 bytes of
        content and data, newest first, would pass it; the newest actum is always kept,
        and ``next_before`` leads to the rest (``CHRONICA["API_MAX_RESPONSE_BYTES"]``).
        ``raw_data``: each actum's ``data`` comes as its stored JSON text, a
        ``chronica.RawJSON``, not decoded (what the API writes into its answers).
        """
        check_owner(owner_id)
        query = build_query(
            kinds=kinds,
            actor_kinds=actor_kinds,
            actors=actors,
            last_n=last_n,
            max_tokens=max_tokens,
            before=before,
            max_bytes=max_bytes,
            raw_data=raw_data,
        )
        whole = check_whole_tool_calls(whole_tool_calls)
        query = self._compacted(query, compacted)
        cut, more = self._page(owner_id, chronicum_id, query)
        page = keep_whole_tool_calls(cut) if whole else cut
        return ActaPage(page, cut[0].id if more else None)

    def _page(self, owner_id: str, chronicum_id: str, query: ActaQuery) -> tuple[list[Actum], bool]:
        """The window and whether an older page exists: one read of the store's
        ``window``, the owner checked in it. A store of the seed's four methods: its
        acta read whole and cut here (counting tokens now: such a store kept no
        counts)."""
        if self._windows:
            self._check_ids(owner_id, chronicum_id)
            found = self.store.window(owner_id, chronicum_id, query)  # type: ignore[attr-defined]
            if found is None:
                raise ChronicumNotFound(chronicum_id)
            return found  # type: ignore[no-any-return]
        self._own(owner_id, chronicum_id)
        if query.max_tokens is None and query.before is None and query.max_bytes is None:
            limit = query.last_n
            longer = dataclasses.replace(query, last_n=limit + 1) if limit else query
            cut = self.store.acta(chronicum_id, longer)
            if limit and len(cut) > limit:
                return cut[1:], True
            return cut, False
        return cut_page(self.store.acta(chronicum_id, ActaQuery()), query, self.token_counter)

    def _window(self, owner_id: str, chronicum_id: str, query: ActaQuery) -> list[Actum]:
        return self._page(owner_id, chronicum_id, query)[0]

    def get_chronicum(self, owner_id: str, chronicum_id: str) -> Chronicum:
        """Return the chronicum if it belongs to ``owner_id``, else ``ChronicumNotFound``."""
        check_owner(owner_id)
        return self._own(owner_id, chronicum_id)

    aget_acta = async_twin(get_acta)
    aget_acta_page = async_twin(get_acta_page)
    aget_chronicum = async_twin(get_chronicum)
