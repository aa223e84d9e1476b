"""The cases of the window capabilities: batches, budgeted windows and pages."""

from __future__ import annotations

from typing import Any

from ..errors import ChronicumNotFound, InvalidQuery
from ..values import ActaQuery, Actum, Recorded
from .base import REQ, RES, M, T, _Base, _expect, _expect_raises


class BatchStoreConformance(_Base):
    """The cases every ``BatchStore`` must pass: a batch lands whole, contiguous and in
    order, or not at all, and a keyed batch lands at most once."""

    batch_writers = 8
    batches_per_writer = 10

    def batch(self, chronicum_id: str, size: int, label: str = "b") -> list[Actum]:
        return [self.actum(chronicum_id, f"{label}{i}") for i in range(size)]

    def test_a_batch_lands_whole_in_order_with_one_moment(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        before = store.record(self.actum(cid, "before"))
        sent = [
            self.actum(cid, "m", kind=M),
            self.actum(cid, "req", kind=REQ, call_id="call-1", data={"q": "Kemang"}),
            self.actum(cid, "", kind=RES, call_id="call-1", data=[{"name": "Rumah Teduh"}]),
        ]
        recorded = store.record_batch(sent, None, [5, 7, 9])
        _expect(isinstance(recorded, Recorded), f"record_batch returned {recorded!r}")
        _expect(not recorded.replayed, "a first write is not a replay")
        stored = recorded.acta
        _expect([a.id for a in stored] == [a.id for a in sent], "IDs kept, in the given order")
        _expect(len({a.at for a in stored}) == 1, "one moment for the whole batch")
        _expect(store.get(cid).last_activity_at == stored[0].at, "last_activity_at is that moment")
        _expect(store.acta(cid, ActaQuery()) == [before, *stored], "the batch follows, whole")

    def test_a_batch_into_a_missing_chronicum_writes_nothing(self) -> None:
        store = self.make_store()
        missing = self.new_id("missing")
        _expect_raises(
            ChronicumNotFound,
            lambda: store.record_batch(self.batch(missing, 3), None, [1, 1, 1]),
            "record_batch into a missing chronicum",
        )
        _expect_raises(ChronicumNotFound, lambda: store.get(missing), "nothing created")

    def test_a_keyed_batch_is_replayed_whole_and_a_retry_discarded(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        first = store.record_batch(self.batch(cid, 3, "first"), "turn-1", [1, 1, 1])
        last_activity = store.get(cid).last_activity_at
        for retry in (
            self.batch(cid, 3, "again"),
            self.batch(cid, 5, "longer"),
            self.batch(cid, 1),
        ):
            replay = store.record_batch(retry, "turn-1", [1] * len(retry))
            _expect(replay.replayed, "a used key is a replay")
            _expect(replay.acta == first.acta, f"the replay returned {replay.acta!r}")
        _expect(store.acta(cid, ActaQuery()) == first.acta, "retries write nothing")
        _expect(store.get(cid).last_activity_at == last_activity, "a replay writes nothing")
        other = store.record_batch(self.batch(cid, 2, "other"), "turn-2", [1, 1])
        _expect(not other.replayed, "another key is another batch")
        prefix = store.record_batch(self.batch(cid, 1, "prefix"), "turn", [1])
        _expect(not prefix.replayed, "a key that is a prefix of another is its own key")

    def test_concurrent_batches_are_each_contiguous(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        size = 5

        def write(writer: int) -> None:
            for n in range(self.batches_per_writer):
                store.record_batch(self.batch(cid, size, f"w{writer}-{n}-"), None, [1] * size)

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
            lambda i: store.record_batch(self.batch(cid, 3, f"t{i}-"), "turn-1", [1, 1, 1]),
        )
        stored = store.acta(cid, ActaQuery())
        _expect(len(stored) == 3, f"{len(stored)} acta stored for one keyed batch of 3")
        _expect(all(r.acta == stored for r in results), "every caller gets the stored batch")
        _expect(sum(not r.replayed for r in results) == 1, "exactly one caller wrote it")


class WindowStoreConformance(_Base):
    """The cases every ``WindowStore`` must pass: ``before`` and ``max_tokens``."""

    def contents(self, store: Any, cid: str, **query: Any) -> list[str]:
        return [a.content for a in store.acta(cid, ActaQuery(**query))]

    def test_before_pages_back(self) -> None:
        store = self.make_store()
        cid, acta = self.dinner(store)
        got = self.contents(store, cid, before=acta[4].id)
        _expect(got == ["a0", "a1", "a2", "a3"], f"before a4: {got}")
        got = self.contents(store, cid, before=acta[4].id, last_n=2)
        _expect(got == ["a2", "a3"], f"before a4, last 2: {got}")
        got = self.contents(store, cid, before=acta[5].id, kinds=frozenset({M}), last_n=1)
        _expect(got == ["a4"], f"before a5, last message: {got}")
        got = self.contents(store, cid, before=acta[0].id)
        _expect(got == [], f"before the first actum: {got}")
        # An actum the filters leave out still marks the place.
        got = self.contents(store, cid, before=acta[3].id, kinds=frozenset({M}))
        _expect(got == ["a0", "a2"], f"before a thought, messages only: {got}")

    def test_before_an_unknown_actum_is_invalid_query(self) -> None:
        store = self.make_store()
        cid, _ = self.dinner(store)
        _, other_acta = self.dinner(store)
        for before in ("no-such-actum", other_acta[2].id):
            _expect_raises(
                InvalidQuery,
                lambda before=before: store.acta(cid, ActaQuery(before=before)),  # type: ignore[misc]
                f"before={before!r}",
            )

    def test_max_tokens_keeps_the_newest_that_fit(self) -> None:
        store = self.make_store()
        cid, _ = self.dinner(store)
        for budget, want in [
            (0, []),
            (59, []),  # the newest alone does not fit: the window is empty
            (60, ["a5"]),
            (109, ["a5"]),
            (110, ["a4", "a5"]),
            (210, ["a0", "a1", "a2", "a3", "a4", "a5"]),
            (10**12, ["a0", "a1", "a2", "a3", "a4", "a5"]),
        ]:
            got = self.contents(store, cid, max_tokens=budget)
            _expect(got == want, f"max_tokens={budget}: {got}, want {want}")

    def test_max_tokens_counts_only_what_passes_the_filters(self) -> None:
        store = self.make_store()
        cid, acta = self.dinner(store)
        messages = frozenset({M})
        got = self.contents(store, cid, kinds=messages, max_tokens=80)
        _expect(got == ["a2", "a4"], f"messages in 80 tokens: {got}")
        got = self.contents(store, cid, kinds=messages, max_tokens=80, last_n=1)
        _expect(got == ["a4"], f"both limits hold: {got}")
        got = self.contents(store, cid, before=acta[5].id, max_tokens=90)
        _expect(got == ["a3", "a4"], f"before a5 in 90 tokens: {got}")

    def test_an_actum_recorded_without_a_count_is_estimated(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        # 4 + ceil(bytes / 3.5): 4 + 4 for "Rumah Teduh" (11 bytes), 4 + 2 for "🍽" (4 bytes).
        store.record_batch(
            [self.actum(cid, "Rumah Teduh"), self.actum(cid, "🍽")], None, [None, None]
        )
        got = self.contents(store, cid, max_tokens=13)
        _expect(got == ["🍽"], f"within 13 tokens: {got}")
        got = self.contents(store, cid, max_tokens=14)
        _expect(got == ["Rumah Teduh", "🍽"], f"within 14 tokens: {got}")


class PagingStoreConformance(_Base):
    """The cases every ``PagingStore`` must pass: the window of ``acta_if_owner`` and
    whether an older actum passes the filters, from one read."""

    def page(self, store: Any, cid: str, **query: Any) -> tuple[list[str], bool]:
        found = store.acta_page_if_owner("ardian", cid, ActaQuery(**query))
        _expect(found is not None, f"acta_page_if_owner of ardian's chronicum: {found!r}")
        acta, more = found
        _expect(acta == store.acta(cid, ActaQuery(**query)), f"the window of {query}")
        return [a.content for a in acta], more

    def test_more_when_an_older_actum_passes_the_filters(self) -> None:
        store = self.make_store()
        cid, acta = self.dinner(store)
        cases: list[tuple[dict[str, Any], tuple[list[str], bool]]] = [
            ({}, (["a0", "a1", "a2", "a3", "a4", "a5"], False)),
            ({"last_n": 2}, (["a4", "a5"], True)),
            ({"last_n": 6}, (["a0", "a1", "a2", "a3", "a4", "a5"], False)),
            ({"last_n": 2, "kinds": frozenset({M})}, (["a2", "a4"], True)),
            ({"last_n": 3, "kinds": frozenset({M})}, (["a0", "a2", "a4"], False)),
            # a0 is older than the window, and a message: it does not pass.
            ({"last_n": 3, "kinds": frozenset({T})}, (["a1", "a3", "a5"], False)),
            # a1 is older than the window and a thought: it does not pass.
            ({"last_n": 1, "kinds": frozenset({M}), "before": acta[2].id}, (["a0"], False)),
            ({"last_n": 1, "before": acta[2].id}, (["a1"], True)),
            ({"before": acta[0].id}, ([], False)),
        ]
        for query, want in cases:
            got = self.page(store, cid, **query)
            _expect(got == want, f"{query}: {got}, want {want}")

    def test_more_when_the_budget_cut_the_window_short(self) -> None:
        store = self.make_store()
        cid, acta = self.dinner(store)
        cases: list[tuple[dict[str, Any], tuple[list[str], bool]]] = [
            ({"max_tokens": 110}, (["a4", "a5"], True)),
            ({"max_tokens": 210}, (["a0", "a1", "a2", "a3", "a4", "a5"], False)),
            # The newest alone does not fit: an empty window has no older page.
            ({"max_tokens": 59}, ([], False)),
            ({"max_tokens": 80, "kinds": frozenset({M})}, (["a2", "a4"], True)),
            ({"max_tokens": 90, "before": acta[5].id}, (["a3", "a4"], True)),
            ({"max_tokens": 1000, "last_n": 1, "before": acta[1].id}, (["a0"], False)),
        ]
        for query, want in cases:
            got = self.page(store, cid, **query)
            _expect(got == want, f"{query}: {got}, want {want}")

    def test_a_page_of_someone_else_or_a_missing_chronicum_is_none(self) -> None:
        store = self.make_store()
        cid, _ = self.dinner(store)
        for owner, chronicum_id in (("rafa", cid), ("ardian", self.new_id("missing"))):
            got = store.acta_page_if_owner(owner, chronicum_id, ActaQuery(last_n=1))
            _expect(got is None, f"acta_page_if_owner({owner!r}, {chronicum_id!r}): {got!r}")
        _expect_raises(
            InvalidQuery,
            lambda: store.acta_page_if_owner("ardian", cid, ActaQuery(before="no-such-actum")),
            "before an actum that is not there",
        )
