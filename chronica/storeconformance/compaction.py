"""The cases of fork and compaction: a copy that keeps every field but the ID, and a
compacted view that hides nothing from anyone who does not ask for it."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from ..errors import ChronicumExists, InvalidQuery
from ..values import ActaQuery, ActorKind, Actum, Chronicum
from .base import REQ, RES, _Base, _expect, _expect_raises


def _fields(actum: Actum) -> tuple[object, ...]:
    return (
        actum.kind,
        actum.actor_kind,
        actum.actor,
        actum.content,
        actum.call_id,
        actum.data,
        actum.at,
        actum.recorded_by,
    )


class ForkConformance(_Base):
    """The cases every store with ``supports_fork`` must pass."""

    ability = "fork"

    def _new(self, owner_id: str = "ardian") -> Chronicum:
        now = dt.datetime.now(dt.UTC)
        return Chronicum(self.new_id("fork"), owner_id, now, now)

    def test_a_fork_copies_every_actum_in_order_with_new_ids(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        acta = [
            self.actum(cid, "a table for four?"),
            self.actum(
                cid,
                "",
                kind=REQ,
                actor_kind=ActorKind.AGENT,
                actor="booking",
                call_id="c1",
                data={"table": 4},
            ),
            self.actum(
                cid,
                "booked",
                kind=RES,
                actor_kind=ActorKind.AGENT,
                actor="booking",
                call_id="c1",
                data=["ok", 1.5, None],
            ),
        ]
        acta = [dataclasses.replace(acta[0], recorded_by="owner"), *acta[1:]]
        source = store.append(None, cid, acta, key="dinner-1", tokens=[3, 4, 5]).acta
        new = self._new()
        forked = store.fork("ardian", cid, None, new)
        _expect(forked is not None and forked.id == new.id, "the fork answers the new chronicum")
        _expect(store.get(new.id).owner_id == "ardian", "the fork is the owner's")
        copies = store.acta(new.id, ActaQuery())
        _expect(
            [_fields(a) for a in copies] == [_fields(a) for a in source], "same acta, same order"
        )
        _expect(all(a.chronicum_id == new.id for a in copies), "the copies are the fork's")
        ids = {a.id for a in copies}
        _expect(len(ids) == 3 and not ids & {a.id for a in source}, "new actum IDs")
        _expect(store.acta(cid, ActaQuery()) == source, "the source is unchanged")
        again = store.append(None, new.id, [self.actum(new.id, "other")], key="dinner-1")
        _expect(not again.replayed, "the copies carry no idempotency key")
        if getattr(store, "supports_window", False):
            page = store.window(None, new.id, ActaQuery(max_tokens=9))
            _expect(page is not None and len(page[0]) == 1, "token counts are copied")

    def test_a_fork_through_an_actum_stops_there(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        source = store.append(None, cid, self.labelled(cid, 5)).acta
        new = self._new()
        store.fork("ardian", cid, source[2].id, new)
        copies = store.acta(new.id, ActaQuery())
        _expect([a.content for a in copies] == ["b0", "b1", "b2"], "up to and with through")
        store.append(None, new.id, [self.actum(new.id, "branch")])
        _expect(len(store.acta(cid, ActaQuery())) == 5, "writes to the fork stay in it")

    def test_a_fork_of_an_empty_chronicum_is_empty(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        new = self._new()
        store.fork("ardian", cid, None, new)
        _expect(store.acta(new.id, ActaQuery()) == [], "an empty fork")

    def test_a_fork_refuses_without_writing(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        store.append(None, cid, self.labelled(cid, 2))
        other = self.new_chronicum(store, "rafa").id
        new = self._new()
        _expect(store.fork("rafa", cid, None, new) is None, "another owner's source: None")
        _expect(store.fork("ardian", self.new_id(), None, new) is None, "a missing one: None")
        _expect_raises(
            InvalidQuery, lambda: store.fork("ardian", cid, "no-such-actum", new), "a bad through"
        )
        _expect_raises(
            ChronicumExists,
            lambda: store.fork("ardian", cid, None, dataclasses.replace(new, id=other)),
            "a taken ID",
        )
        from ..errors import ChronicumNotFound

        _expect_raises(ChronicumNotFound, lambda: store.get(new.id), "nothing was created")
        _expect(store.get(other).owner_id == "rafa", "the taken chronicum is untouched")


class CompactionConformance(_Base):
    """The cases every store with ``supports_compaction`` must pass."""

    ability = "compaction"

    def _view(self, store: Any, cid: str, **query: Any) -> list[str]:
        page = store.window(None, cid, ActaQuery(compacted=True, **query))
        _expect(page is not None, "the chronicum is there")
        return [a.content for a in page[0]]

    def test_the_compacted_view_and_nothing_lost(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        first = store.append(None, cid, self.labelled(cid, 4)).acta
        summary = store.compact(None, cid, [self.actum(cid, "summary 1")], first[3].id)
        _expect(summary is not None, "the compaction is stored")
        _expect([a.compacts for a in summary.acta] == [first[3].id], "compacts names through")
        store.append(None, cid, self.labelled(cid, 2, "c"))
        every = [a.content for a in store.acta(cid, ActaQuery())]
        _expect(every == ["b0", "b1", "b2", "b3", "summary 1", "c0", "c1"], "nothing is hidden")
        _expect(
            [a.compacts for a in store.acta(cid, ActaQuery())] == [""] * 4 + [first[3].id, "", ""],
            "compacts on the compaction's acta only",
        )
        _expect(self._view(store, cid) == ["summary 1", "c0", "c1"], "the compacted view")
        _expect(self._view(store, cid, last_n=2) == ["c0", "c1"], "limits run on the view")

    def test_a_newer_compaction_supersedes_an_older(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        first = store.append(None, cid, self.labelled(cid, 3)).acta
        store.compact(None, cid, [self.actum(cid, "s1a"), self.actum(cid, "s1b")], first[1].id)
        late = store.append(None, cid, self.labelled(cid, 2, "c")).acta
        _expect(self._view(store, cid) == ["s1a", "s1b", "b2", "c0", "c1"], "after through")
        store.compact(None, cid, [self.actum(cid, "s2")], late[0].id)
        _expect(self._view(store, cid) == ["s2", "c1"], "the newest compaction only")
        # The same through twice in a row: the newer batch alone.
        store.compact(None, cid, [self.actum(cid, "s3")], late[0].id)
        _expect(self._view(store, cid) == ["s3", "c1"], "a repeated through")
        # A compaction with no acta after it hides its history.
        newest = store.acta(cid, ActaQuery(last_n=1))[0]
        store.compact(None, cid, [self.actum(cid, "s4")], newest.id)
        _expect(self._view(store, cid) == ["s4"], "through the newest actum")

    def test_a_bad_through_or_a_missing_chronicum_writes_nothing(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        first = store.append(None, cid, self.labelled(cid, 2)).acta
        _expect_raises(
            InvalidQuery,
            lambda: store.compact(None, cid, [self.actum(cid, "s")], "no-such-actum"),
            "a through that is not there",
        )
        _expect(len(store.acta(cid, ActaQuery())) == 2, "nothing written")
        other = self.new_chronicum(store).id
        other_actum = store.append(None, other, [self.actum(other, "x")]).acta[0]
        _expect_raises(
            InvalidQuery,
            lambda: store.compact(None, cid, [self.actum(cid, "s")], other_actum.id),
            "a through of another chronicum",
        )
        _expect(
            store.compact("rafa", cid, [self.actum(cid, "s")], first[0].id) is None,
            "another owner's chronicum: None",
        )
        missing = self.new_id()
        _expect(
            store.compact("ardian", missing, [self.actum(missing, "s")], first[0].id) is None,
            "a missing chronicum: None",
        )
        _expect(len(store.acta(cid, ActaQuery())) == 2, "still nothing written")

    def test_a_keyed_compaction_is_recorded_once(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        first = store.append(None, cid, self.labelled(cid, 2)).acta
        once = store.compact(
            None, cid, [self.actum(cid, "s"), self.actum(cid, "t")], first[1].id, key="compact-1"
        )
        again = store.compact(None, cid, [self.actum(cid, "other")], first[1].id, key="compact-1")
        _expect(
            again.replayed and [a.id for a in again.acta] == [a.id for a in once.acta],
            "the replay answers the first batch",
        )
        _expect(len(store.acta(cid, ActaQuery())) == 4, "written once")

    def test_filters_run_on_the_compacted_view_and_pages_go_back_through_it(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        first = store.append(None, cid, self.labelled(cid, 3)).acta
        store.compact(
            None,
            cid,
            [self.actum(cid, "s", actor_kind=ActorKind.AGENT, actor="concierge")],
            first[2].id,
        )
        store.append(None, cid, self.labelled(cid, 3, "c"))
        _expect(
            self._view(store, cid, actors=frozenset({"ardian"})) == ["c0", "c1", "c2"],
            "filters after the view",
        )
        page = store.window(None, cid, ActaQuery(compacted=True, last_n=2))
        _expect(page is not None and page[1], "an older page of the view exists")
        older = store.window(None, cid, ActaQuery(compacted=True, last_n=2, before=page[0][0].id))
        _expect([a.content for a in older[0]] == ["s", "c0"] and not older[1], "and ends there")

    def test_a_follow_of_the_compacted_view(self) -> None:
        store = self.make_store()
        if not getattr(store, "supports_follow", False):
            return
        cid = self.new_chronicum(store).id
        first = store.append(None, cid, self.labelled(cid, 3)).acta
        store.compact(None, cid, [self.actum(cid, "s")], first[1].id)
        found = store.acta_after("ardian", cid, ActaQuery(compacted=True), first[0].id, 100)
        _expect([a.content for a in found[0]] == ["b2", "s"], "only what the view shows")

    def test_acta_recorded_while_a_compaction_was_made_follow_it_in_the_view(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        first = store.append(None, cid, self.labelled(cid, 3)).acta
        store.append(None, cid, self.labelled(cid, 2, "g"))  # while the summary is made
        store.compact(None, cid, [self.actum(cid, "s1"), self.actum(cid, "s2")], first[2].id)
        store.append(None, cid, self.labelled(cid, 1, "c"))
        _expect(self._view(store, cid) == ["s1", "s2", "g0", "g1", "c0"], "the view's order")
        for last_n, expected in ((2, ["g1", "c0"]), (4, ["s2", "g0", "g1", "c0"])):
            page = store.window(None, cid, ActaQuery(compacted=True, last_n=last_n))
            _expect([a.content for a in page[0]] == expected, f"last_n={last_n}")
            _expect(page[1], f"last_n={last_n}: an older page of the view")
        whole = store.window(None, cid, ActaQuery(compacted=True, last_n=5))
        _expect(len(whole[0]) == 5 and not whole[1], "the whole view, no older page")

    def test_a_filtered_window_never_reaches_behind_the_compaction(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        first = store.append(None, cid, self.labelled(cid, 3)).acta
        summary = self.actum(cid, "s", actor_kind=ActorKind.AGENT, actor="concierge")
        store.compact(None, cid, [summary], first[2].id)
        store.append(None, cid, self.labelled(cid, 1, "c"))
        mine = frozenset({"ardian"})
        _expect(self._view(store, cid, actors=mine, last_n=3) == ["c0"], "filtered, limited")
        _expect(self._view(store, cid, last_n=3) == ["s", "c0"], "limited, short view")
