"""The cases of the two protocols every store implements: ``Store`` and, for exactly-once
writes, ``IdempotentStore``."""

from __future__ import annotations

import dataclasses
import datetime as dt

from ..errors import ChronicumExists, ChronicumNotFound
from ..interfaces import IdempotentStore
from ..values import ActaQuery, ActorKind, ActumKind, Chronicum
from .base import REQ, RES, M, T, _Base, _expect, _expect_raises


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

    def test_actor_filter(self) -> None:
        """``actors`` keeps the acta of those actor IDs, exactly (no prefix, no case
        folding), with the other filters, and before the limit."""
        store = self.make_store()
        cid = self.new_chronicum(store).id
        rows = [
            ("a", M, "ardian"),
            ("b", T, "booking"),
            ("c", M, "booking"),
            ("d", M, "Ardian"),
            ("e", M, "ardian-bot"),
            ("f", T, "ardian"),
        ]
        for content, kind, actor in rows:
            store.record(self.actum(cid, content, kind=kind, actor=actor))

        def contents(query: ActaQuery) -> list[str]:
            return [a.content for a in store.acta(cid, query)]

        ardian = frozenset({"ardian"})
        _expect(contents(ActaQuery(actors=ardian)) == ["a", "f"], "actors=ardian")
        both = frozenset({"ardian", "booking"})
        _expect(contents(ActaQuery(actors=both)) == ["a", "b", "c", "f"], "actors=ardian,booking")
        _expect(
            contents(ActaQuery(actors=both, kinds=frozenset({M}))) == ["a", "c"],
            "actors=ardian,booking and kind=message",
        )
        _expect(contents(ActaQuery(actors=both, last_n=2)) == ["c", "f"], "before the limit")
        _expect(contents(ActaQuery(actors=frozenset({"nobody"}))) == [], "an unknown actor")

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

    def test_recorded_by_round_trips(self) -> None:
        """``Actum.recorded_by`` (who wrote it: ``"owner"``, ``"credential:<key ID>"``, or
        ``None`` when not attested) is kept as Chronicarius sets it, and read back."""
        store = self.make_store()
        cid = self.new_chronicum(store).id
        signed = dataclasses.replace(self.actum(cid, "held"), recorded_by="credential:abc123")
        stored = store.record(signed)
        _expect(stored.recorded_by == "credential:abc123", f"record returned {stored!r}")
        store.record(self.actum(cid, "unattested"))
        read = store.acta(cid, ActaQuery())
        _expect(
            [a.recorded_by for a in read] == ["credential:abc123", None],
            f"recorded_by came back as {[a.recorded_by for a in read]!r}",
        )

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
