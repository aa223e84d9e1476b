"""The cases of search (``supports_search``)."""

from __future__ import annotations

from ..search import parse_query
from ..values import ActaQuery, ActumKind
from .base import _Base, _expect


class SearchConformance(_Base):
    """The cases every store with ``supports_search`` must pass. Each case uses a word
    of its own, so a shared database's other acta never match."""

    ability = "search"

    def test_only_the_owners_acta_that_match_best_first(self) -> None:
        store = self.make_store()
        word = self.new_id("kemang").replace("-", "")
        owner, other = self.new_id("owner"), self.new_id("owner")
        mine = self.new_chronicum(store, owner)
        theirs = self.new_chronicum(store, other)
        store.record(self.actum(mine.id, f"a quiet table in {word}"))
        store.record(self.actum(mine.id, f"{word} {word} {word}, and {word} again"))
        store.record(self.actum(mine.id, "nothing to find here"))
        store.record(self.actum(theirs.id, f"their own {word}"))
        hits = store.search(owner, parse_query(word), ActaQuery())
        _expect(len(hits) == 2, f"{len(hits)} hits for the owner's 2")
        _expect(all(h.actum.chronicum_id == mine.id for h in hits), "only the owner's acta")
        _expect(hits[0].rank >= hits[1].rank, "the best rank first")
        _expect(all(h.actum.at is not None and h.actum.id for h in hits), "stored acta")
        _expect(word in hits[0].snippet.lower(), "the snippet shows the match")
        _expect(
            store.search(other, parse_query(word), ActaQuery())[0].actum.chronicum_id == theirs.id,
            "the other owner's own",
        )

    def test_data_strings_filters_chronica_and_paging(self) -> None:
        store = self.make_store()
        word = self.new_id("padi").replace("-", "")
        owner = self.new_id("owner")
        first, second = self.new_chronicum(store, owner), self.new_chronicum(store, owner)
        store.record(self.actum(first.id, "", kind=ActumKind.TOOL_RESPONSE, data={"v": [word]}))
        store.record(self.actum(second.id, f"said {word}"))
        query = parse_query(word)
        _expect(len(store.search(owner, query, ActaQuery())) == 2, "content and data")
        tools = store.search(owner, query, ActaQuery(kinds=frozenset({ActumKind.TOOL_RESPONSE})))
        _expect([h.actum.chronicum_id for h in tools] == [first.id], "the kinds filter")
        only = store.search(owner, query, ActaQuery(), chronica=frozenset({second.id}))
        _expect([h.actum.chronicum_id for h in only] == [second.id], "the chronica allowed")
        whole = store.search(owner, query, ActaQuery())
        paged = store.search(owner, query, ActaQuery(), limit=1) + store.search(
            owner, query, ActaQuery(), limit=1, offset=1
        )
        _expect(paged == whole, "limit and offset page through the same order")

    def test_what_is_removed_is_not_found(self) -> None:
        store = self.make_store()
        word = self.new_id("gone").replace("-", "")
        owner = self.new_id("owner")
        chronicum = self.new_chronicum(store, owner)
        store.record(self.actum(chronicum.id, f"soon {word}"))
        if getattr(store, "supports_pop", False):
            store.pop(owner, chronicum.id)
            _expect(store.search(owner, parse_query(word), ActaQuery()) == [], "popped")
        store.record(self.actum(chronicum.id, f"again {word}"))
        if getattr(store, "supports_delete", False):
            store.delete(owner, chronicum.id)
            _expect(store.search(owner, parse_query(word), ActaQuery()) == [], "deleted")
