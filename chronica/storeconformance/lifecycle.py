"""The cases of the lifecycle abilities: listing, deleting, popping."""

from __future__ import annotations

import datetime as dt
import threading

from ..errors import ChronicumNotFound
from ..values import ActaQuery, Actum, Chronicum
from .base import _Base, _expect, _expect_raises


class ListingConformance(_Base):
    """The cases every store with ``supports_listing`` must pass."""

    ability = "listing"

    def test_an_owners_chronica_latest_activity_first(self) -> None:
        store = self.make_store()
        owner = self.new_id("owner")
        chronica = [self.new_chronicum(store, owner) for _ in range(4)]
        store.record(self.actum(chronica[1].id, "latest"))
        self.new_chronicum(store, self.new_id("someone-else"))
        listed = store.list_chronica(owner, 100, None)
        _expect(listed[0] == store.get(chronica[1].id), "the latest activity comes first")
        _expect(
            sorted(c.id for c in listed) == sorted(c.id for c in chronica),
            "exactly the owner's chronica",
        )
        activity = [c.last_activity_at for c in listed]
        _expect(activity == sorted(activity, reverse=True), "latest activity first")
        _expect(store.list_chronica(self.new_id("nobody"), 100, None) == [], "nobody has none")

    def test_pages_cover_every_chronicum_once_ties_by_id(self) -> None:
        store = self.make_store()
        owner = self.new_id("owner")
        moment = dt.datetime(2026, 6, 1, 19, 0, tzinfo=dt.UTC)
        tied = [Chronicum(f"{self.new_id('tie')}", owner, moment, moment) for _ in range(5)]
        for chronicum in tied:
            store.create(chronicum)
        others = [self.new_chronicum(store, owner) for _ in range(4)]
        seen: list[Chronicum] = []
        after = None
        while True:
            page = store.list_chronica(owner, 2, after)
            if not page:
                break
            _expect(len(page) <= 2, f"a page of {len(page)} for limit 2")
            seen += page
            after = page[-1]
        _expect(len(seen) == 9, f"{len(seen)} listed for 9")
        _expect(len({c.id for c in seen}) == 9, "no chronicum twice")
        _expect(
            [c.id for c in seen[-5:]] == sorted(c.id for c in tied),
            "ties (the oldest here) come by ID",
        )
        _expect({c.id for c in seen[:4]} == {c.id for c in others}, "the newer ones first")


class DeleteConformance(_Base):
    """The cases every store with ``supports_delete`` must pass (with ``append``: once
    deleted, an ID is anyone's, so the former owner's writes must be refused where they
    append)."""

    ability = "delete"

    def test_delete_removes_the_chronicum_and_its_acta(self) -> None:
        store = self.make_store()
        chronicum = self.new_chronicum(store, "ardian")
        kept = self.new_chronicum(store, "ardian")
        store.record(self.actum(chronicum.id, "gone"))
        store.record(self.actum(kept.id, "kept"))
        _expect(store.delete("ardian", chronicum.id) is True, "delete answers True")
        _expect_raises(ChronicumNotFound, lambda: store.get(chronicum.id), "get after delete")
        _expect_raises(ChronicumNotFound, lambda: store.acta(chronicum.id, ActaQuery()), "acta")
        _expect(len(store.acta(kept.id, ActaQuery())) == 1, "another chronicum is untouched")
        _expect_raises(
            ChronicumNotFound,
            lambda: store.record(self.actum(chronicum.id)),
            "record into a deleted chronicum",
        )
        store.create(Chronicum(chronicum.id, "rafa", chronicum.started_at, chronicum.started_at))
        _expect(store.acta(chronicum.id, ActaQuery()) == [], "a new chronicum of that ID is empty")

    def test_delete_of_someone_elses_or_a_missing_chronicum_removes_nothing(self) -> None:
        store = self.make_store()
        chronicum = self.new_chronicum(store, "ardian")
        store.record(self.actum(chronicum.id))
        for owner, cid in (("rafa", chronicum.id), ("ardian", self.new_id("missing"))):
            deleted = store.delete(owner, cid)
            _expect(deleted is False, f"delete({owner!r}, {cid!r}) answered {deleted!r}")
        _expect(len(store.acta(chronicum.id, ActaQuery())) == 1, "nothing was removed")

    def test_records_racing_a_delete_land_before_it_or_fail_cleanly(self) -> None:
        store = self.make_store()
        chronicum = self.new_chronicum(store, "ardian")
        deleted = threading.Event()

        def work(i: int) -> list[Actum | None]:
            if i == 0:
                try:
                    store.delete("ardian", chronicum.id)
                finally:
                    deleted.set()
                return []
            results: list[Actum | None] = []
            while True:
                after_delete = deleted.is_set()
                try:
                    results.append(store.record(self.actum(chronicum.id, f"w{i}")))
                except ChronicumNotFound:
                    results.append(None)
                if after_delete:
                    return results

        outcomes = self.run_threads(5, work)
        _expect_raises(ChronicumNotFound, lambda: store.get(chronicum.id), "deleted")
        for results in outcomes[1:]:
            _expect(results[-1] is None, "a record after the delete raises ChronicumNotFound")

    def test_the_former_owner_neither_writes_nor_reads_after_a_re_create(self) -> None:
        store = self.make_store()
        chronicum = self.new_chronicum(store, "ardian")
        store.record(self.actum(chronicum.id, "ardian's"))
        store.delete("ardian", chronicum.id)
        store.create(Chronicum(chronicum.id, "rafa", chronicum.started_at, chronicum.started_at))
        for key in (None, "booking-reply-1"):
            got = store.append(
                "ardian", chronicum.id, [self.actum(chronicum.id, "ardian's again")], key=key
            )
            _expect(got is None, f"ardian wrote into rafa's chronicum (key={key!r}): {got!r}")
        _expect(store.window("ardian", chronicum.id, ActaQuery()) is None, "ardian read")
        _expect(store.acta(chronicum.id, ActaQuery()) == [], "rafa's chronicum is empty")

    def test_a_replay_answers_only_the_owners_acta(self) -> None:
        """After a keyed write, ardian's chronicum is deleted and rafa writes with the
        same key into the same ID: ardian's retry is no replay of rafa's acta."""
        store = self.make_store()
        cid = self.new_chronicum(store, "ardian").id
        store.append("ardian", cid, self.labelled(cid, 2, "ardian"), key="booking-reply-1")
        store.delete("ardian", cid)
        now = dt.datetime.now(dt.UTC)
        store.create(Chronicum(cid, "rafa", now, now))
        store.append("rafa", cid, self.labelled(cid, 2, "RAFA PRIVATE "), key="booking-reply-1")
        got = store.append("ardian", cid, self.labelled(cid, 2, "retry"), key="booking-reply-1")
        _expect(got is None, f"ardian's retry answered rafa's acta: {got!r}")

    def test_writes_racing_a_delete_and_a_re_create_stay_with_their_owner(self) -> None:
        store = self.make_store()
        chronicum = self.new_chronicum(store, "ardian")
        recreated = threading.Event()

        def work(i: int) -> int:
            if i == 0:
                try:
                    store.delete("ardian", chronicum.id)
                    now = dt.datetime.now(dt.UTC)
                    store.create(Chronicum(chronicum.id, "rafa", now, now))
                finally:
                    recreated.set()
                return 0
            written = 0
            while True:
                after = recreated.is_set()
                got = store.append(
                    "ardian", chronicum.id, [self.actum(chronicum.id, f"ardian w{i}")]
                )
                written += got is not None
                if after:
                    return written

        self.run_threads(5, work)
        stray = [a.content for a in store.acta(chronicum.id, ActaQuery())]
        _expect(stray == [], f"ardian's writes landed in rafa's chronicum: {stray[:5]}")
        _expect(store.get(chronicum.id).owner_id == "rafa", "rafa owns it")


class PopConformance(_Base):
    """The cases every store with ``supports_pop`` must pass."""

    ability = "pop"

    def test_pop_takes_the_newest_until_none(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store, "ardian").id
        stored = [store.record(self.actum(cid, f"a{i}")) for i in range(3)]
        for expected in reversed(stored):
            popped = store.pop("ardian", cid)
            _expect(popped == expected, f"popped {popped!r}, want {expected!r}")
        _expect(store.pop("ardian", cid) is None, "an empty chronicum pops None")
        _expect(store.acta(cid, ActaQuery()) == [], "nothing left")

    def test_pop_of_someone_elses_or_a_missing_chronicum_raises(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store, "ardian").id
        store.record(self.actum(cid))
        for owner, chronicum_id in (("rafa", cid), ("ardian", self.new_id("missing"))):
            _expect_raises(
                ChronicumNotFound,
                lambda o=owner, c=chronicum_id: store.pop(o, c),  # type: ignore[misc]
                f"pop({chronicum_id!r}, {owner!r})",
            )
        _expect(len(store.acta(cid, ActaQuery())) == 1, "nothing was popped")

    def test_concurrent_pops_never_return_the_same_actum(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store, "ardian").id
        count = 24
        store.append("ardian", cid, self.labelled(cid, count, "a"))
        results = self.run_threads(8, lambda i: [store.pop("ardian", cid) for _ in range(4)])
        popped = [a.content for rs in results for a in rs if a is not None]
        _expect(len(popped) == len(set(popped)), f"an actum popped twice: {sorted(popped)}")
        _expect(len(popped) == count, f"{len(popped)} popped of {count}")

    def test_a_replay_whose_batch_is_gone_lands_again(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store, "ardian").id
        store.append("ardian", cid, self.labelled(cid, 2, "first"), key="booking-reply-1")
        while store.pop("ardian", cid) is not None:
            pass
        again = store.append("ardian", cid, self.labelled(cid, 2, "again"), key="booking-reply-1")
        _expect(again is not None and not again.replayed, f"a replay of nothing: {again!r}")
        contents = [a.content for a in store.acta(cid, ActaQuery())]
        _expect(contents == ["again0", "again1"], f"the batch landed again: {contents}")
