"""The cases of ``append``: a batch, keyed or not, owner-checked where it appends."""

from __future__ import annotations

from ..errors import ChronicumExists
from ..values import ActaQuery, Recorded
from .base import REQ, RES, M, _Base, _expect, _expect_raises


class AppendConformance(_Base):
    """The cases every store with ``supports_append`` must pass: a batch lands whole,
    contiguous and in order, or not at all; a keyed batch lands at most once; the
    owner is checked in the same step as the append, and a replay answers only the
    owner's acta."""

    ability = "append"
    batch_writers = 8
    batches_per_writer = 10

    def test_a_batch_lands_whole_in_order_with_one_moment(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        before = store.record(self.actum(cid, "before"))
        sent = [
            self.actum(cid, "m", kind=M),
            self.actum(cid, "req", kind=REQ, call_id="call-1", data={"q": "Kemang"}),
            self.actum(cid, "", kind=RES, call_id="call-1", data=[{"name": "Rumah Teduh"}]),
        ]
        recorded = store.append("ardian", cid, sent, tokens=[5, 7, 9])
        _expect(isinstance(recorded, Recorded), f"append returned {recorded!r}")
        _expect(not recorded.replayed, "a first write is not a replay")
        stored = recorded.acta
        _expect([a.id for a in stored] == [a.id for a in sent], "IDs kept, in the given order")
        _expect(len({a.at for a in stored}) == 1, "one moment for the whole batch")
        _expect(store.get(cid).last_activity_at == stored[0].at, "last_activity_at is that moment")
        _expect(store.acta(cid, ActaQuery()) == [before, *stored], "the batch follows, whole")

    def test_someone_else_and_a_missing_chronicum_get_none(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store, "ardian").id
        first = store.record(self.actum(cid, "ardian's"))
        store.append("ardian", cid, [self.actum(cid, "keyed")], key="k")
        missing = self.new_id("missing")
        for owner, chronicum_id in (("rafa", cid), ("ardian", missing)):
            for key in (None, "k"):
                got = store.append(owner, chronicum_id, [self.actum(chronicum_id, "x")], key=key)
                _expect(got is None, f"append({owner!r}, {chronicum_id!r}, key={key!r}): {got!r}")
        _expect(store.acta(cid, ActaQuery())[0] == first, "nothing written")
        _expect(len(store.acta(cid, ActaQuery())) == 2, "nothing written")
        _expect_raises(LookupError, lambda: store.get(missing), "nothing created")

    def test_create_missing_creates_for_the_owner_only(self) -> None:
        store = self.make_store()
        cid = self.new_id()
        got = store.append("ardian", cid, [self.actum(cid, "first")], create="missing")
        _expect(got is not None and len(got.acta) == 1, f"a first write: {got!r}")
        _expect(store.get(cid).owner_id == "ardian", "created for its writer")
        again = store.append("ardian", cid, [self.actum(cid, "second")], create="missing")
        _expect(again is not None, "the owner writes on")
        theirs = store.append("rafa", cid, [self.actum(cid, "rafa's")], create="missing")
        _expect(theirs is None, f"another owner's chronicum is not rafa's: {theirs!r}")
        keyed = self.new_id()
        first = store.append("ardian", keyed, [self.actum(keyed)], key="k", create="missing")
        replay = store.append("ardian", keyed, [self.actum(keyed)], key="k", create="missing")
        _expect(first is not None and replay is not None and replay.replayed, "keyed, created")
        _expect(replay is not None and first is not None and replay.acta == first.acta, "replay")
        contents = [a.content for a in store.acta(cid, ActaQuery())]
        _expect(contents == ["first", "second"], f"{contents}")

    def test_create_new_refuses_a_taken_id(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store, "ardian").id
        _expect_raises(
            ChronicumExists,
            lambda: store.append("ardian", cid, [], create="new"),
            "create='new' of a taken ID",
        )
        fresh = self.new_id()
        made = store.append("rafa", fresh, [], create="new")
        _expect(made == Recorded([]), f"create='new' of a free ID: {made!r}")
        _expect(store.get(fresh).owner_id == "rafa", "created for rafa")

    def test_first_writes_racing_give_every_actum_to_one_owner(self) -> None:
        store = self.make_store()
        cid = self.new_id()

        def work(i: int) -> Recorded | None:
            owner = ("ardian", "rafa")[i % 2]
            landed: Recorded | None = store.append(
                owner, cid, [self.actum(cid, owner)], create="missing"
            )
            return landed

        results = self.run_threads(8, work)
        owner = store.get(cid).owner_id
        landed = [r for r in results if r is not None]
        _expect(len(landed) == 4, f"{len(landed)} first writes landed, want the owner's 4")
        contents = [a.content for a in store.acta(cid, ActaQuery())]
        _expect(contents == [owner] * 4, f"only the owner's acta: {contents}")

    def test_a_keyed_batch_is_replayed_whole_and_a_retry_discarded(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        first = store.append("ardian", cid, self.labelled(cid, 3, "first"), key="turn-1")
        last_activity = store.get(cid).last_activity_at
        for retry in (
            self.labelled(cid, 3, "again"),
            self.labelled(cid, 5, "longer"),
            self.labelled(cid, 1),
        ):
            replay = store.append("ardian", cid, retry, key="turn-1")
            _expect(replay is not None and replay.replayed, "a used key is a replay")
            _expect(replay.acta == first.acta, f"the replay returned {replay.acta!r}")
        _expect(store.acta(cid, ActaQuery()) == first.acta, "retries write nothing")
        _expect(store.get(cid).last_activity_at == last_activity, "a replay writes nothing")
        other = store.append("ardian", cid, self.labelled(cid, 2, "other"), key="turn-2")
        _expect(not other.replayed, "another key is another batch")
        prefix = store.append("ardian", cid, self.labelled(cid, 1, "prefix"), key="turn")
        _expect(not prefix.replayed, "a key that is a prefix of another is its own key")

    def test_concurrent_batches_are_each_contiguous(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        size = 5

        def write(writer: int) -> None:
            for n in range(self.batches_per_writer):
                store.append("ardian", cid, self.labelled(cid, size, f"w{writer}-{n}-"))

        self.run_threads(self.batch_writers, write)
        acta = store.acta(cid, ActaQuery())
        _expect(
            len(acta) == self.batch_writers * self.batches_per_writer * size,
            f"{len(acta)} acta stored",
        )
        for start in range(0, len(acta), size):
            labels = [a.content for a in acta[start : start + size]]
            head = labels[0][:-1]
            _expect(
                labels == [f"{head}{i}" for i in range(size)],
                f"batch {head} is not contiguous and in order: {labels}",
            )

    def test_concurrent_calls_with_one_key_store_one_batch(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        results = self.run_threads(
            self.concurrency,
            lambda i: store.append("ardian", cid, self.labelled(cid, 3, f"t{i}-"), key="turn-1"),
        )
        stored = store.acta(cid, ActaQuery())
        _expect(len(stored) == 3, f"{len(stored)} acta stored for one keyed batch of 3")
        _expect(all(r.acta == stored for r in results), "every caller gets the stored batch")
        _expect(sum(not r.replayed for r in results) == 1, "exactly one caller wrote it")
