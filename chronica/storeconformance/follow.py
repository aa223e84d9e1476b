"""The cases of ``acta_after``: reading forward from a position, missing nothing."""

from __future__ import annotations

import time

from ..errors import InvalidQuery
from ..values import ActaQuery, Actum
from ..windows import size
from .base import M, T, _Base, _expect, _expect_raises


class FollowConformance(_Base):
    """The cases every store with ``supports_follow`` must pass."""

    ability = "follow"

    def test_from_now_then_what_comes_after(self) -> None:
        store = self.make_store()
        cid, _acta = self.dinner(store)
        now = store.acta_after("ardian", cid, ActaQuery(), None, 100)
        _expect(now is not None and now[0] == [] and now[2] is False, f"from now: {now!r}")
        assert now is not None
        later = store.append("ardian", cid, self.labelled(cid, 3, "later")).acta
        got, position, more = store.acta_after("ardian", cid, ActaQuery(), now[1], 100)
        _expect(got == later, f"what came after: {got!r}")
        _expect(position > now[1] and not more, f"the next position {position}, more {more}")
        again = store.acta_after("ardian", cid, ActaQuery(), position, 100)
        _expect(again == ([], position, False), f"nothing new: {again!r}")

    def test_after_an_actum_filters_and_limits(self) -> None:
        store = self.make_store()
        cid, acta = self.dinner(store)
        got, _position, _more = store.acta_after("ardian", cid, ActaQuery(), acta[2].id, 100)
        _expect([a.content for a in got] == ["a3", "a4", "a5"], f"after a2: {got!r}")
        messages = ActaQuery(kinds=frozenset({M}))
        got, _position, _more = store.acta_after("ardian", cid, messages, acta[0].id, 100)
        _expect([a.content for a in got] == ["a2", "a4"], f"messages after a0: {got!r}")
        got, position, more = store.acta_after("ardian", cid, ActaQuery(), acta[0].id, 2)
        _expect([a.content for a in got] == ["a1", "a2"] and more, f"a page of 2: {got!r}")
        rest, _position, more = store.acta_after("ardian", cid, ActaQuery(), position, 2)
        _expect([a.content for a in rest] == ["a3", "a4"] and more, f"the next page: {rest!r}")
        thoughts = ActaQuery(kinds=frozenset({T}))
        got, position, more = store.acta_after("ardian", cid, thoughts, acta[4].id, 100)
        _expect([a.content for a in got] == ["a5"] and not more, f"a thought after a4: {got!r}")
        _expect(
            store.acta_after("ardian", cid, ActaQuery(), position, 100) == ([], position, False),
            "read up to the newest",
        )
        _expect_raises(
            InvalidQuery,
            lambda: store.acta_after("ardian", cid, ActaQuery(), "no-such-actum", 100),
            "after an actum that is not there",
        )

    def test_a_byte_budget_cuts_a_page_and_the_first_always_comes(self) -> None:
        store = self.make_store()
        cid, acta = self.dinner(store)
        weight = size(acta[1])
        got, position, more = store.acta_after(
            "ardian", cid, ActaQuery(max_bytes=weight * 2), acta[0].id, 100
        )
        _expect([a.content for a in got] == ["a1", "a2"] and more, f"cut at 2: {got!r}")
        got, position, more = store.acta_after("ardian", cid, ActaQuery(max_bytes=1), position, 100)
        _expect([a.content for a in got] == ["a3"] and more, f"one whatever its size: {got!r}")

    def test_someone_else_and_a_missing_chronicum_get_none(self) -> None:
        store = self.make_store()
        cid, acta = self.dinner(store)
        for owner, chronicum_id in (("rafa", cid), ("ardian", self.new_id("missing"))):
            for position in (None, 0, acta[0].id):
                got = store.acta_after(owner, chronicum_id, ActaQuery(), position, 100)
                _expect(got is None, f"acta_after({owner!r}, {position!r}): {got!r}")

    def test_a_follower_misses_nothing_of_concurrent_writers(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        writers, each = 4, 25
        start = store.acta_after("ardian", cid, ActaQuery(), None, 100)
        assert start is not None
        seen: list[Actum] = []

        def work(i: int) -> None:
            if i < writers:
                for n in range(each):
                    store.append("ardian", cid, [self.actum(cid, f"w{i}-{n}")])
                return
            position, deadline = start[1], time.monotonic() + 60
            while len(seen) < writers * each and time.monotonic() < deadline:
                page = store.acta_after("ardian", cid, ActaQuery(), position, 7)
                assert page is not None
                seen.extend(page[0])
                position = page[1]

        self.run_threads(writers + 1, work)
        stored = store.acta(cid, ActaQuery())
        _expect([a.id for a in seen] == [a.id for a in stored], "every actum once, in order")
