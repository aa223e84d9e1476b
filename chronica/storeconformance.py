"""The reusable test-suite every chronica store runs against itself.

The suite is the specification of a store. Use it in a few lines::

    from chronica import storeconformance

    class TestMyStore(storeconformance.StoreConformance):
        def make_store(self):
            return MyStore()

    class TestMyIdempotentStore(storeconformance.IdempotentStoreConformance):
        def make_store(self):
            return MyStore()

Each optional capability of ``chronica.interfaces`` has its suite too:
``BatchStoreConformance``, ``WindowStoreConformance``, ``ListingStoreConformance``,
``DeletingStoreConformance``, ``PoppingStoreConformance``,
``OwnerScopedStoreConformance``, ``PagingStoreConformance`` and
``StateStoreConformance``; ``ALL_SUITES`` lists every suite by capability.

The classes work under pytest as they are and as mixins of ``unittest.TestCase``
(for a Django database, ``TransactionTestCase`` or pytest-django's
``django_db(transaction=True)``: the concurrent cases use real threads). Each
case uses fresh random chronicum IDs and never assumes an empty store, so it can
run against a persistent, shared database. Outside a test runner,
``run_test(factory)``, ``run_idempotent_test(factory)`` and
``run_suite(suite, factory)`` run every case.
"""

from __future__ import annotations

import datetime as dt
import secrets
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .errors import ChronicumExists, ChronicumNotFound, InvalidQuery, StateConflict
from .interfaces import IdempotentStore, OwnerScopedStore, Store
from .values import (
    ActaQuery,
    ActorKind,
    Actum,
    ActumKind,
    Chronicum,
    Recorded,
    StateChange,
    StateScope,
)

__all__ = [
    "ALL_SUITES",
    "BatchStoreConformance",
    "DeletingStoreConformance",
    "IdempotentStoreConformance",
    "ListingStoreConformance",
    "OwnerScopedStoreConformance",
    "PagingStoreConformance",
    "PoppingStoreConformance",
    "StateStoreConformance",
    "StoreConformance",
    "WindowStoreConformance",
    "run_idempotent_test",
    "run_suite",
    "run_test",
]

M, T, REQ, RES = (
    ActumKind.MESSAGE,
    ActumKind.THOUGHT,
    ActumKind.TOOL_REQUEST,
    ActumKind.TOOL_RESPONSE,
)


def _expect(condition: bool, message: str) -> None:
    # Not `assert`: the suite must fail under `python -O` too.
    if not condition:
        raise AssertionError(message)


def _expect_raises(error: type[Exception], call: Callable[[], Any], what: str) -> None:
    try:
        result = call()
    except error:
        return
    raise AssertionError(f"{what}: expected {error.__name__}, got {result!r}")


class _Base:
    concurrency = 40
    """How many threads the concurrent cases start."""

    def make_store(self) -> Any:
        """Return the store under test (a new one, or one shared with earlier cases)."""
        raise NotImplementedError("subclass the conformance suite and define make_store()")

    def release_thread_resources(self) -> None:
        """Called at the end of every worker thread. By default it closes the
        thread's Django database connections, if Django is configured."""
        from django.conf import settings

        if settings.configured:
            from django.db import connections

            connections.close_all()

    # -- helpers -------------------------------------------------------------

    @staticmethod
    def new_id(prefix: str = "conformance") -> str:
        return f"{prefix}-{secrets.token_hex(8)}"

    def new_chronicum(self, store: Any, owner_id: str = "ardian") -> Chronicum:
        now = dt.datetime.now(dt.UTC)
        chronicum = Chronicum(self.new_id(), owner_id, now, now)
        store.create(chronicum)
        return chronicum

    def dinner(self, store: Any) -> tuple[str, list[Actum]]:
        """Six acta with token counts 10, 20, 30, 40, 50, 60; kinds M, T, M, T, M, T."""
        cid = self.new_chronicum(store).id
        acta = [self.actum(cid, f"a{i}", kind=(M, T)[i % 2]) for i in range(6)]
        stored = store.record_batch(acta, None, [10, 20, 30, 40, 50, 60]).acta
        return cid, stored

    @staticmethod
    def actum(
        chronicum_id: str,
        content: str = "hello",
        *,
        kind: ActumKind = M,
        actor_kind: ActorKind = ActorKind.HUMAN,
        actor: str = "ardian",
        id: str | None = None,
        call_id: str = "",
        data: Any = None,
    ) -> Actum:
        return Actum(
            chronicum_id=chronicum_id,
            kind=kind,
            actor_kind=actor_kind,
            actor=actor,
            content=content,
            id=id if id is not None else secrets.token_hex(16),
            call_id=call_id,
            data=data,
        )

    def run_threads(self, count: int, work: Callable[[int], Any]) -> list[Any]:
        """Run ``work(i)`` for ``i`` in ``range(count)`` in ``count`` threads started together."""
        barrier = threading.Barrier(count)

        def worker(i: int) -> Any:
            try:
                barrier.wait(timeout=30)
                return work(i)
            finally:
                self.release_thread_resources()

        with ThreadPoolExecutor(max_workers=count) as pool:
            return list(pool.map(worker, range(count)))


class StoreConformance(_Base):
    """The cases every ``Store`` must pass."""

    def test_create_then_get_returns_the_stored_owner(self) -> None:
        store = self.make_store()
        chronicum = self.new_chronicum(store, owner_id="ardian")
        got = store.get(chronicum.id)
        _expect(got == chronicum, f"get returned {got!r}, created {chronicum!r}")
        _expect(got.owner_id == "ardian", f"owner {got.owner_id!r}, want 'ardian'")

    def test_create_of_a_taken_id_raises_chronicum_exists(self) -> None:
        store = self.make_store()
        chronicum = self.new_chronicum(store, owner_id="ardian")
        now = dt.datetime.now(dt.UTC)
        _expect_raises(
            ChronicumExists,
            lambda: store.create(Chronicum(chronicum.id, "rafa", now, now)),
            "create of a taken ID",
        )
        _expect(store.get(chronicum.id).owner_id == "ardian", "the first owner must be kept")

    def test_racing_creates_give_the_id_to_one_owner_for_good(self) -> None:
        """Chronicarius checks a plain store's owner with ``get`` and then records: that
        is safe only because one create wins an ID and nothing a plain store does
        changes the owner afterwards."""
        store = self.make_store()
        chronicum_id = self.new_id()

        def work(i: int) -> str | None:
            now = dt.datetime.now(dt.UTC)
            try:
                store.create(Chronicum(chronicum_id, f"owner-{i}", now, now))
            except ChronicumExists:
                return None
            store.record(self.actum(chronicum_id, f"by owner-{i}"))
            return f"owner-{i}"

        winners = [w for w in self.run_threads(8, work) if w is not None]
        _expect(len(winners) == 1, f"{len(winners)} creates of one ID succeeded: {winners}")
        owner = store.get(chronicum_id).owner_id
        _expect(owner == winners[0], f"the owner is {owner!r}, the create that won was {winners}")

    def test_get_of_a_missing_chronicum_raises_not_found(self) -> None:
        store = self.make_store()
        _expect_raises(ChronicumNotFound, lambda: store.get(self.new_id("missing")), "get")

    def test_record_into_a_missing_chronicum_raises_not_found(self) -> None:
        store = self.make_store()
        missing = self.new_id("missing")
        _expect_raises(ChronicumNotFound, lambda: store.record(self.actum(missing)), "record")
        _expect_raises(ChronicumNotFound, lambda: store.get(missing), "record must not create")

    def test_acta_of_a_missing_chronicum_raises_not_found(self) -> None:
        # A SQL store that finds no rows answers an empty list: that is a bug.
        store = self.make_store()
        missing = self.new_id("missing")
        _expect_raises(ChronicumNotFound, lambda: store.acta(missing, ActaQuery()), "acta")

    def test_acta_of_an_empty_chronicum_is_an_empty_list(self) -> None:
        store = self.make_store()
        chronicum = self.new_chronicum(store)
        _expect(store.acta(chronicum.id, ActaQuery()) == [], "a new chronicum has no acta")

    def test_filters_run_before_the_limit(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        for content, kind in [("m1", M), ("t1", T), ("m2", M), ("t2", T), ("m3", M), ("t3", T)]:
            store.record(self.actum(cid, content, kind=kind))
        got = store.acta(cid, ActaQuery(kinds=frozenset({M}), last_n=2))
        _expect([a.content for a in got] == ["m2", "m3"], f"got {[a.content for a in got]}")
        got = store.acta(cid, ActaQuery(last_n=2))
        _expect([a.content for a in got] == ["m3", "t3"], f"got {[a.content for a in got]}")
        for no_limit in (0, -1):
            got = store.acta(cid, ActaQuery(last_n=no_limit))
            _expect(len(got) == 6, f"last_n={no_limit} must mean no limit, got {len(got)}")
        got = store.acta(cid, ActaQuery(kinds=frozenset({M, T}), last_n=100))
        _expect(len(got) == 6, "a limit above the count returns everything")

    def test_kind_and_actor_kind_filters(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        rows = [
            ("a", M, ActorKind.HUMAN),
            ("b", T, ActorKind.AGENT),
            ("c", REQ, ActorKind.AGENT),
            ("d", RES, ActorKind.SYSTEM),
            ("e", M, ActorKind.AGENT),
        ]
        for content, kind, actor_kind in rows:
            store.record(self.actum(cid, content, kind=kind, actor_kind=actor_kind))

        def contents(query: ActaQuery) -> list[str]:
            return [a.content for a in store.acta(cid, query)]

        agent = frozenset({ActorKind.AGENT})
        _expect(contents(ActaQuery(actor_kinds=agent)) == ["b", "c", "e"], "actor_kinds=agent")
        both = frozenset({ActorKind.HUMAN, ActorKind.SYSTEM})
        _expect(contents(ActaQuery(actor_kinds=both)) == ["a", "d"], "actor_kinds=human,system")
        _expect(
            contents(ActaQuery(kinds=frozenset({M}), actor_kinds=agent)) == ["e"],
            "kind=message and actor_kind=agent",
        )
        tools = frozenset({REQ, RES})
        _expect(contents(ActaQuery(kinds=tools)) == ["c", "d"], "kinds=tool_request,tool_response")
        _expect(contents(ActaQuery()) == ["a", "b", "c", "d", "e"], "no filter")

    def test_record_bumps_last_activity_to_the_actum_at(self) -> None:
        store = self.make_store()
        chronicum = self.new_chronicum(store)
        stored = store.record(self.actum(chronicum.id))
        got = store.get(chronicum.id)
        _expect(got.last_activity_at == stored.at, f"{got.last_activity_at} != {stored.at}")
        _expect(got.started_at == chronicum.started_at, "record must not move started_at")
        later = store.record(self.actum(chronicum.id, "again"))
        _expect(store.get(chronicum.id).last_activity_at == later.at, "second record bumps")

    def test_record_returns_the_full_actum(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        sent = self.actum(
            cid,
            'Rumah Teduh \U0001f37d "quiet" \'; DROP TABLE acta; --',
            kind=REQ,
            actor_kind=ActorKind.AGENT,
            actor="search",
            id="caller-chosen-id",
        )
        before = dt.datetime.now(dt.UTC)
        stored = store.record(sent)
        after = dt.datetime.now(dt.UTC)
        _expect(stored.id == "caller-chosen-id", f"id {stored.id!r} was not kept")
        _expect(stored.at is not None, "at must be set")
        assert stored.at is not None
        _expect(stored.at.utcoffset() == dt.timedelta(0), f"at must be aware UTC: {stored.at!r}")
        slack = dt.timedelta(seconds=5)
        _expect(before - slack <= stored.at <= after + slack, f"at {stored.at} is not now")
        for field in ("chronicum_id", "kind", "actor_kind", "actor", "content"):
            _expect(getattr(stored, field) == getattr(sent, field), f"{field} changed")
        _expect(type(stored.kind) is ActumKind, "kind must come back as ActumKind")
        _expect(type(stored.actor_kind) is ActorKind, "actor_kind must come back as ActorKind")
        read = store.acta(cid, ActaQuery())
        _expect(read == [stored], f"acta returned {read!r}, record returned {stored!r}")
        empty = store.record(self.actum(cid, "", kind=RES, actor_kind=ActorKind.AGENT))
        _expect(empty.content == "", "an empty tool response round-trips")

    def test_call_id_and_data_round_trip(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        data = {
            "type": "function_call",
            "arguments": '{"area": "Kemang", "party": 4}',
            "nested": [1, 2.5, -(2**63), 2**64 + 1, True, False, None, {}, [], "🍽"],
            "big float": 1e300,
            "tiny float": 5e-324,
        }
        sent = self.actum(
            cid, "search(Kemang)", kind=REQ, actor_kind=ActorKind.AGENT, call_id="call-1", data=data
        )
        stored = store.record(sent)
        _expect((stored.call_id, stored.data) == ("call-1", data), f"record returned {stored!r}")
        [read] = store.acta(cid, ActaQuery())
        _expect(read.call_id == "call-1", f"call_id came back as {read.call_id!r}")
        _expect(read.data == data, f"data came back as {read.data!r}")
        _expect(type(read.data["big float"]) is float, "a big float must come back a float")
        bare = store.record(self.actum(cid, "x", kind=RES, data="a bare string"))
        _expect(store.acta(cid, ActaQuery())[-1] == bare, "a bare JSON string round-trips")
        plain = store.record(self.actum(cid, "no data"))
        read_plain = store.acta(cid, ActaQuery())[-1]
        _expect((read_plain.call_id, read_plain.data) == ("", None), "no call_id, no data")
        _expect(read_plain == plain, "an actum without data round-trips")

    def test_a_thousand_acta_come_back_in_write_order(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        for i in range(1000):
            store.record(self.actum(cid, f"actum {i}", kind=(M, T, REQ, RES)[i % 4]))
        got = [a.content for a in store.acta(cid, ActaQuery())]
        _expect(got == [f"actum {i}" for i in range(1000)], "acta not in write order")
        last = [a.content for a in store.acta(cid, ActaQuery(last_n=3))]
        _expect(last == ["actum 997", "actum 998", "actum 999"], f"last 3: {last}")

    def test_concurrent_records_all_land_once(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        results = self.run_threads(
            self.concurrency, lambda i: store.record(self.actum(cid, f"writer {i}"))
        )
        got = store.acta(cid, ActaQuery())
        contents = sorted(a.content for a in got)
        want = sorted(f"writer {i}" for i in range(self.concurrency))
        _expect(contents == want, f"{len(got)} acta stored for {self.concurrency} writers")
        _expect(sorted(r.id for r in results) == sorted(a.id for a in got), "ids differ")


class IdempotentStoreConformance(_Base):
    """The cases every ``IdempotentStore`` must pass, on top of ``StoreConformance``."""

    def make_store(self) -> IdempotentStore:
        raise NotImplementedError("subclass the conformance suite and define make_store()")

    def test_the_same_key_twice_gives_the_same_actum_and_stores_one(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        first = store.record_idempotent(self.actum(cid, "All set."), "booking-reply-1")
        again = store.record_idempotent(self.actum(cid, "All set."), "booking-reply-1")
        _expect(again == first, f"replay returned {again!r}, first was {first!r}")
        _expect(store.acta(cid, ActaQuery()) == [first], "the replay must store nothing")

    def test_the_stored_actum_wins_over_a_reworded_retry(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        first = store.record_idempotent(
            self.actum(cid, "A table for four at Rumah Teduh.", id="first-id"), "booking-reply-1"
        )
        last_activity = store.get(cid).last_activity_at
        retry = store.record_idempotent(
            self.actum(cid, "All set. Confirmation RT-4821.", id="second-id"), "booking-reply-1"
        )
        _expect(retry == first, f"the reworded retry returned {retry!r}")
        _expect(retry.id == "first-id", "the first ID comes back")
        _expect(store.acta(cid, ActaQuery()) == [first], "the reworded retry must be discarded")
        _expect(store.get(cid).last_activity_at == last_activity, "a replay writes nothing")
        other = store.record_idempotent(self.actum(cid, "Another reply."), "booking-reply-2")
        _expect(other != first, "another key records another actum")
        other_cid = self.new_chronicum(store).id
        elsewhere = store.record_idempotent(self.actum(other_cid, "Hi."), "booking-reply-1")
        _expect(elsewhere.chronicum_id == other_cid, "keys belong to one chronicum")
        _expect_raises(
            ChronicumNotFound,
            lambda: store.record_idempotent(self.actum(self.new_id("missing")), "k"),
            "record_idempotent into a missing chronicum",
        )

    def test_concurrent_calls_with_one_key_store_one_actum(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        results = self.run_threads(
            self.concurrency,
            lambda i: store.record_idempotent(self.actum(cid, f"reply {i}"), "booking-reply-1"),
        )
        stored = store.acta(cid, ActaQuery())
        _expect(len(stored) == 1, f"{len(stored)} acta stored for one key")
        _expect(all(r == stored[0] for r in results), "every caller must get the stored actum")


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


class StateStoreConformance(_Base):
    """The cases every ``StateStore`` must pass: state documents written with the acta,
    all or nothing, the owner checked in the same step, none lost under concurrency."""

    namespace = "conformance"

    def change(self, scope: StateScope = StateScope.CHRONICUM, **fields: Any) -> StateChange:
        return StateChange(namespace=self.namespace, scope=scope, **fields)

    def fresh(self, store: Any, owner_id: str = "ardian", **state: Any) -> str:
        now = dt.datetime.now(dt.UTC)
        cid = self.new_id()
        created = store.write_state(
            owner_id,
            cid,
            [],
            None,
            [],
            [self.change(set=state)],
            Chronicum(cid, owner_id, now, now),
        )
        _expect(created == Recorded([]), f"create with state answered {created!r}")
        return cid

    def test_acta_and_every_scope_of_state_in_one_write(self) -> None:
        store = self.make_store()
        cid = self.fresh(store, party=4)
        changes = [
            self.change(set={"time": "7pm"}, path=("booking",)),
            self.change(StateScope.OWNER, set={"name": "Ardian"}),
            self.change(StateScope.NAMESPACE, set={"city": "Jakarta"}),
        ]
        recorded = store.write_state(
            "ardian", cid, [self.actum(cid, "hi")], None, [1], changes, None
        )
        _expect(recorded is not None and len(recorded.acta) == 1, f"wrote {recorded!r}")
        view = store.read_state("ardian", self.namespace, cid, ActaQuery())
        _expect(view.chronicum is not None and view.chronicum.id == cid, "the chronicum")
        _expect(view.chronicum_state == {"party": 4, "booking": {"time": "7pm"}}, "its state")
        _expect(view.owner_state == {"name": "Ardian"}, f"owner state {view.owner_state!r}")
        _expect(view.namespace_state == {"city": "Jakarta"}, "namespace state")
        _expect(view.acta == recorded.acta if recorded else False, "the window")
        replaced = [self.change(set={"only": True}, replace=True)]
        store.write_state("ardian", cid, [], None, [], replaced, None)
        again = store.read_state("ardian", self.namespace, cid, None)
        _expect(again.chronicum_state == {"only": True} and again.acta is None, "replaced")

    def test_owner_state_is_the_owners_and_namespace_state_everyones(self) -> None:
        store = self.make_store()
        mine, theirs = self.fresh(store, "ardian"), self.fresh(store, "rafa")
        store.write_state(
            "ardian", mine, [], None, [], [self.change(StateScope.OWNER, set={"a": 1})], None
        )
        store.write_state(
            "rafa", theirs, [], None, [], [self.change(StateScope.NAMESPACE, set={"n": 2})], None
        )
        rafa = store.read_state("rafa", self.namespace, mine, ActaQuery())
        _expect(rafa.chronicum is None and rafa.chronicum_state is None, "not rafa's chronicum")
        _expect(rafa.acta is None and rafa.owner_state == {}, "nor ardian's owner state")
        _expect(rafa.namespace_state.get("n") == 2, "the namespace state is everyone's")
        other = store.read_state("ardian", "another-namespace", mine, None)
        _expect(other.chronicum_state is None and other.owner_state == {}, "per namespace")

    def test_someone_else_and_a_missing_chronicum_get_none_and_nothing_changes(self) -> None:
        store = self.make_store()
        cid = self.fresh(store, k="v")
        for owner, chronicum_id in (("rafa", cid), ("ardian", self.new_id("missing"))):
            got = store.write_state(
                owner,
                chronicum_id,
                [self.actum(chronicum_id, "intruder")],
                None,
                [1],
                [self.change(set={"k": "x"}), self.change(StateScope.OWNER, set={"x": 1})],
                None,
            )
            _expect(got is None, f"write_state({owner!r}) answered {got!r}")
        view = store.read_state("ardian", self.namespace, cid, ActaQuery())
        _expect(view.chronicum_state == {"k": "v"} and view.acta == [], "nothing written")
        _expect(store.read_state("rafa", self.namespace, None, None).owner_state == {}, "nor that")

    def test_an_expectation_that_fails_writes_nothing(self) -> None:
        store = self.make_store()
        cid = self.fresh(store, revision="r1")
        changes = [
            self.change(set={"revision": "r2"}, expect={"revision": "r0"}),
            self.change(StateScope.OWNER, set={"seen": True}),
        ]
        _expect_raises(
            StateConflict,
            lambda: store.write_state("ardian", cid, [self.actum(cid)], None, [1], changes, None),
            "an expect that does not hold",
        )
        view = store.read_state("ardian", self.namespace, cid, ActaQuery())
        _expect(view.chronicum_state == {"revision": "r1"} and view.acta == [], "nothing written")
        _expect(view.owner_state == {}, "no shared state written")
        now = dt.datetime.now(dt.UTC)
        new = self.new_id()
        _expect_raises(
            StateConflict,
            lambda: store.write_state(
                "ardian", new, [], None, [], changes, Chronicum(new, "ardian", now, now)
            ),
            "an expect that does not hold on create",
        )
        _expect_raises(ChronicumNotFound, lambda: store.get(new), "no chronicum created")
        held = [self.change(set={"revision": "r2"}, expect={"revision": "r1", "absent": None})]
        store.write_state("ardian", cid, [], None, [], held, None)
        state = store.read_state("ardian", self.namespace, cid, None).chronicum_state
        _expect(state == {"revision": "r2"}, "an expect that holds")

    def test_create_of_a_taken_id_raises_and_changes_nothing(self) -> None:
        store = self.make_store()
        cid = self.fresh(store, "ardian", k="v")
        now = dt.datetime.now(dt.UTC)
        _expect_raises(
            ChronicumExists,
            lambda: store.write_state(
                "rafa",
                cid,
                [],
                None,
                [],
                [self.change(set={"k": "x"})],
                Chronicum(cid, "rafa", now, now),
            ),
            "a taken ID",
        )
        view = store.read_state("ardian", self.namespace, cid, None)
        _expect(view.chronicum_state == {"k": "v"}, "the state is the first owner's")

    def test_a_replay_changes_no_state_and_another_namespace_conflicts(self) -> None:
        store = self.make_store()
        cid = self.fresh(store)
        first = store.write_state(
            "ardian", cid, [self.actum(cid)], "k", [1], [self.change(set={"n": 1})], None
        )
        store.write_state("ardian", cid, [], None, [], [self.change(set={"n": 2})], None)
        replay = store.write_state(
            "ardian", cid, [self.actum(cid)], "k", [1], [self.change(set={"n": 3})], None
        )
        _expect(replay is not None and replay.replayed, f"a replay: {replay!r}")
        _expect(first is not None and replay is not None and replay.acta == first.acta, "same acta")
        state = store.read_state("ardian", self.namespace, cid, None).chronicum_state
        _expect(state == {"n": 2}, f"a replay changes no state: {state!r}")
        elsewhere = [StateChange(namespace="elsewhere", set={"n": 4})]
        _expect_raises(
            StateConflict,
            lambda: store.write_state("ardian", cid, [], None, [], elsewhere, None),
            "a chronicum's state in a second namespace",
        )

    def test_list_namespace_with_and_without_an_owner(self) -> None:
        store = self.make_store()
        self.namespace = self.new_id("listing")
        a = self.fresh(store, "ardian", n="a")
        b = self.fresh(store, "rafa", n="b")
        store.write_state(
            "ardian",
            a,
            [self.actum(a)],
            None,
            [1],
            [self.change(StateScope.OWNER, set={"o": 1})],
            None,
        )
        store.write_state(
            "rafa", b, [], None, [], [self.change(StateScope.NAMESPACE, set={"s": 1})], None
        )
        everyone = store.list_namespace(self.namespace, None)
        _expect([c.id for c, _ in everyone.chronica] == [b, a], "oldest activity first")
        _expect([s for _, s in everyone.chronica] == [{"n": "b"}, {"n": "a"}], "with their state")
        _expect(everyone.owner_states == {"ardian": {"o": 1}}, f"{everyone.owner_states!r}")
        _expect(everyone.namespace_state == {"s": 1}, "the namespace state")
        rafa = store.list_namespace(self.namespace, "rafa")
        _expect([c.id for c, _ in rafa.chronica] == [b] and rafa.owner_states == {}, "rafa's")
        _expect(store.list_namespace(self.new_id("empty"), None).chronica == [], "none")

    def test_concurrent_writes_lose_no_change(self) -> None:
        store = self.make_store()
        cid = self.fresh(store)
        count = min(self.concurrency, 16)

        def work(i: int) -> None:
            changes = [
                self.change(set={f"k{i}": i}),
                self.change(StateScope.OWNER, set={f"k{i}": i}),
                self.change(StateScope.NAMESPACE, set={f"{cid}-{i}": i}),
            ]
            store.write_state("ardian", cid, [self.actum(cid, str(i))], None, [1], changes, None)

        self.run_threads(count, work)
        view = store.read_state("ardian", self.namespace, cid, ActaQuery())
        expected = {f"k{i}": i for i in range(count)}
        _expect(view.chronicum_state == expected, "every chronicum state change")
        _expect(all(view.owner_state.get(k) == v for k, v in expected.items()), "every owner's")
        _expect(all(view.namespace_state.get(f"{cid}-{i}") == i for i in range(count)), "all")
        _expect(len(view.acta or []) == count, "every actum")


ALL_SUITES: dict[str, type[_Base]] = {
    "Store": StoreConformance,
    "IdempotentStore": IdempotentStoreConformance,
    "BatchStore": BatchStoreConformance,
    "WindowStore": WindowStoreConformance,
    "ListingStore": ListingStoreConformance,
    "DeletingStore": DeletingStoreConformance,
    "PoppingStore": PoppingStoreConformance,
    "OwnerScopedStore": OwnerScopedStoreConformance,
}
"""Every suite, by the name of the capability (in ``chronica.interfaces``) it specifies."""


def run_suite(suite: type[_Base], factory: Callable[[], Any]) -> None:
    """Run every case of ``suite`` on stores made by ``factory``; raise on the first failure."""
    _run_cases(suite, factory)


def _run_cases(suite: type[_Base], factory: Callable[[], Any]) -> None:
    runner = type("Runner", (suite,), {"make_store": lambda self: factory()})()
    for name in sorted(dir(runner)):
        if name.startswith("test_"):
            getattr(runner, name)()


def run_test(factory: Callable[[], Store]) -> None:
    """Run every ``StoreConformance`` case on stores made by ``factory``.

    Raises ``AssertionError`` on the first failure."""
    _run_cases(StoreConformance, factory)


def run_idempotent_test(factory: Callable[[], IdempotentStore]) -> None:
    """Run every ``IdempotentStoreConformance`` case; raise on the first failure."""
    _run_cases(IdempotentStoreConformance, factory)
