"""The reusable test-suite every chronica store runs against itself.

The suite is the specification of a store. Use it in a few lines::

    from chronica import storeconformance

    class TestMyStore(storeconformance.StoreConformance):
        def make_store(self):
            return MyStore()

    class TestMyIdempotentStore(storeconformance.IdempotentStoreConformance):
        def make_store(self):
            return MyStore()

The classes work under pytest as they are and as mixins of ``unittest.TestCase``
(for a Django database, ``TransactionTestCase`` or pytest-django's
``django_db(transaction=True)``: the concurrent cases use real threads). Each
case uses fresh random chronicum IDs and never assumes an empty store, so it can
run against a persistent, shared database. Outside a test runner,
``run_test(factory)`` and ``run_idempotent_test(factory)`` run every case.
"""

from __future__ import annotations

import datetime as dt
import secrets
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .errors import ChronicumExists, ChronicumNotFound
from .interfaces import IdempotentStore, Store
from .values import ActaQuery, ActorKind, Actum, ActumKind, Chronicum

__all__ = [
    "IdempotentStoreConformance",
    "StoreConformance",
    "run_idempotent_test",
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

    @staticmethod
    def actum(
        chronicum_id: str,
        content: str = "hello",
        *,
        kind: ActumKind = M,
        actor_kind: ActorKind = ActorKind.HUMAN,
        actor: str = "ardian",
        id: str | None = None,
    ) -> Actum:
        return Actum(
            chronicum_id=chronicum_id,
            kind=kind,
            actor_kind=actor_kind,
            actor=actor,
            content=content,
            id=id if id is not None else secrets.token_hex(16),
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
