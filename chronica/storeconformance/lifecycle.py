"""The cases of the lifecycle capabilities: listing, deleting, popping, owner scope."""

from __future__ import annotations

import datetime as dt
import threading

from ..errors import ChronicumNotFound
from ..interfaces import OwnerScopedStore
from ..values import ActaQuery, Actum, Chronicum
from .base import _Base, _expect, _expect_raises


class ListingStoreConformance(_Base):
    """The cases every ``ListingStore`` must pass."""

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


class DeletingStoreConformance(_Base):
    """The cases every ``DeletingStore`` must pass."""

    def test_delete_removes_the_chronicum_and_its_acta(self) -> None:
        store = self.make_store()
        chronicum = self.new_chronicum(store, "ardian")
        kept = self.new_chronicum(store, "ardian")
        store.record(self.actum(chronicum.id, "gone"))
        store.record(self.actum(kept.id, "kept"))
        store.delete(chronicum.id, "ardian")
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
            _expect_raises(
                ChronicumNotFound,
                lambda owner=owner, cid=cid: store.delete(cid, owner),  # type: ignore[misc]
                f"delete({cid!r}, {owner!r})",
            )
        _expect(len(store.acta(chronicum.id, ActaQuery())) == 1, "nothing was removed")

    def test_records_racing_a_delete_land_before_it_or_fail_cleanly(self) -> None:
        store = self.make_store()
        chronicum = self.new_chronicum(store, "ardian")
        deleted = threading.Event()

        def work(i: int) -> list[Actum | None]:
            if i == 0:
                try:
                    store.delete(chronicum.id, "ardian")
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

    def test_a_deleting_store_checks_the_owner_where_it_writes_and_reads(self) -> None:
        """Once deleted, an ID is anyone's: a store that deletes must be an
        ``OwnerScopedStore`` whose owner-checked write and read refuse the former
        owner in the same step as they append or read (Chronicarius deletes through no
        other store)."""
        store = self.make_store()
        _expect(
            isinstance(store, OwnerScopedStore),
            f"{type(store).__name__} deletes but is not an OwnerScopedStore",
        )
        chronicum = self.new_chronicum(store, "ardian")
        store.record(self.actum(chronicum.id, "ardian's"))
        store.delete(chronicum.id, "ardian")
        store.create(Chronicum(chronicum.id, "rafa", chronicum.started_at, chronicum.started_at))
        for key in (None, "booking-reply-1"):
            got = store.record_batch_if_owner(
                "ardian", [self.actum(chronicum.id, "ardian's again")], key, [1]
            )
            _expect(got is None, f"ardian wrote into rafa's chronicum (key={key!r}): {got!r}")
        _expect(store.acta_if_owner("ardian", chronicum.id, ActaQuery()) is None, "ardian read")
        _expect(store.acta(chronicum.id, ActaQuery()) == [], "rafa's chronicum is empty")

    def test_writes_racing_a_delete_and_a_re_create_stay_with_their_owner(self) -> None:
        store = self.make_store()
        chronicum = self.new_chronicum(store, "ardian")
        recreated = threading.Event()

        def work(i: int) -> int:
            if i == 0:
                try:
                    store.delete(chronicum.id, "ardian")
                    now = dt.datetime.now(dt.UTC)
                    store.create(Chronicum(chronicum.id, "rafa", now, now))
                finally:
                    recreated.set()
                return 0
            written = 0
            while True:
                after = recreated.is_set()
                got = store.record_batch_if_owner(
                    "ardian", [self.actum(chronicum.id, f"ardian w{i}")], None, [1]
                )
                written += got is not None
                if after:
                    return written

        self.run_threads(5, work)
        stray = [a.content for a in store.acta(chronicum.id, ActaQuery())]
        _expect(stray == [], f"ardian's writes landed in rafa's chronicum: {stray[:5]}")
        _expect(store.get(chronicum.id).owner_id == "rafa", "rafa owns it")


class PoppingStoreConformance(_Base):
    """The cases every ``PoppingStore`` must pass."""

    def test_pop_takes_the_newest_until_none(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store, "ardian").id
        stored = [store.record(self.actum(cid, f"a{i}")) for i in range(3)]
        for expected in reversed(stored):
            popped = store.pop(cid, "ardian")
            _expect(popped == expected, f"popped {popped!r}, want {expected!r}")
        _expect(store.pop(cid, "ardian") is None, "an empty chronicum pops None")
        _expect(store.acta(cid, ActaQuery()) == [], "nothing left")

    def test_pop_of_someone_elses_or_a_missing_chronicum_raises(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store, "ardian").id
        store.record(self.actum(cid))
        for owner, chronicum_id in (("rafa", cid), ("ardian", self.new_id("missing"))):
            _expect_raises(
                ChronicumNotFound,
                lambda o=owner, c=chronicum_id: store.pop(c, o),  # type: ignore[misc]
                f"pop({chronicum_id!r}, {owner!r})",
            )
        _expect(len(store.acta(cid, ActaQuery())) == 1, "nothing was popped")

    def test_concurrent_pops_never_return_the_same_actum(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store, "ardian").id
        count = 24
        store.record_batch([self.actum(cid, f"a{i}") for i in range(count)], None, [1] * count)
        results = self.run_threads(8, lambda i: [store.pop(cid, "ardian") for _ in range(4)])
        popped = [a.content for rs in results for a in rs if a is not None]
        _expect(len(popped) == len(set(popped)), f"an actum popped twice: {sorted(popped)}")
        _expect(len(popped) == count, f"{len(popped)} popped of {count}")


class OwnerScopedStoreConformance(_Base):
    """The cases every ``OwnerScopedStore`` must pass: the same as ``record_batch`` and
    ``acta`` for the owner, ``None`` with nothing read or written for anyone else."""

    def test_the_owner_records_and_reads(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store, "ardian").id
        recorded = store.record_batch_if_owner("ardian", [self.actum(cid, "hi")], None, [1])
        _expect(recorded is not None and not recorded.replayed, f"recorded {recorded!r}")
        assert recorded is not None
        _expect(store.acta_if_owner("ardian", cid, ActaQuery()) == recorded.acta, "read back")
        again = store.record_batch_if_owner("ardian", [self.actum(cid, "x")], "k", [1])
        replay = store.record_batch_if_owner("ardian", [self.actum(cid, "y")], "k", [1])
        _expect(replay is not None and replay.replayed, "a used key is a replay")
        assert replay is not None
        assert again is not None
        _expect(replay.acta == again.acta, "the replay is the first batch")

    def test_someone_else_and_a_missing_chronicum_get_none(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store, "ardian").id
        first = store.record(self.actum(cid, "ardian's"))
        store.record_batch([self.actum(cid, "keyed")], "k", [1])
        missing = self.new_id("missing")
        for owner, chronicum_id in (("rafa", cid), ("ardian", missing)):
            for key in (None, "k"):
                got = store.record_batch_if_owner(
                    owner, [self.actum(chronicum_id, "intruder")], key, [1]
                )
                _expect(got is None, f"record_batch_if_owner({owner!r}, key={key!r}): {got!r}")
            got_acta = store.acta_if_owner(owner, chronicum_id, ActaQuery())
            _expect(got_acta is None, f"acta_if_owner({owner!r}) read {got_acta!r}")
        _expect(store.acta(cid, ActaQuery())[0] == first, "nothing written")
        _expect(len(store.acta(cid, ActaQuery())) == 2, "nothing written")
        _expect_raises(ChronicumNotFound, lambda: store.get(missing), "nothing created")
