"""The cases of ``supports_state``: state documents written with the acta."""

from __future__ import annotations

from typing import Any

from ..errors import ChronicumExists, ChronicumNotFound, StateConflict
from ..values import ActaQuery, Recorded, StateChange, StateScope
from .base import _Base, _expect, _expect_raises


class StateConformance(_Base):
    """The cases every store with ``supports_state`` must pass: state documents written
    with the acta (``append(state=...)``), all or nothing, the owner checked in the
    same step, none lost under concurrency."""

    ability = "state"
    namespace = "conformance"

    def change(self, scope: StateScope = StateScope.CHRONICUM, **fields: Any) -> StateChange:
        return StateChange(namespace=self.namespace, scope=scope, **fields)

    def fresh(self, store: Any, owner_id: str = "ardian", **state: Any) -> str:
        cid = self.new_id()
        created = store.append(owner_id, cid, [], state=[self.change(set=state)], create="new")
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
        recorded = store.append("ardian", cid, [self.actum(cid, "hi")], tokens=[1], state=changes)
        _expect(recorded is not None and len(recorded.acta) == 1, f"wrote {recorded!r}")
        view = store.read_state("ardian", self.namespace, cid, ActaQuery())
        _expect(view.chronicum is not None and view.chronicum.id == cid, "the chronicum")
        _expect(view.chronicum_state == {"party": 4, "booking": {"time": "7pm"}}, "its state")
        _expect(view.owner_state == {"name": "Ardian"}, f"owner state {view.owner_state!r}")
        _expect(view.namespace_state == {"city": "Jakarta"}, "namespace state")
        _expect(view.acta == recorded.acta if recorded else False, "the window")
        replaced = [self.change(set={"only": True}, replace=True)]
        store.append("ardian", cid, [], state=replaced)
        again = store.read_state("ardian", self.namespace, cid, None)
        _expect(again.chronicum_state == {"only": True} and again.acta is None, "replaced")

    def test_owner_state_is_the_owners_and_namespace_state_everyones(self) -> None:
        store = self.make_store()
        mine, theirs = self.fresh(store, "ardian"), self.fresh(store, "rafa")
        store.append("ardian", mine, [], state=[self.change(StateScope.OWNER, set={"a": 1})])
        store.append("rafa", theirs, [], state=[self.change(StateScope.NAMESPACE, set={"n": 2})])
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
            got = store.append(
                owner,
                chronicum_id,
                [self.actum(chronicum_id, "intruder")],
                state=[self.change(set={"k": "x"}), self.change(StateScope.OWNER, set={"x": 1})],
            )
            _expect(got is None, f"append({owner!r}) answered {got!r}")
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
            lambda: store.append("ardian", cid, [self.actum(cid)], state=changes),
            "an expect that does not hold",
        )
        view = store.read_state("ardian", self.namespace, cid, ActaQuery())
        _expect(view.chronicum_state == {"revision": "r1"} and view.acta == [], "nothing written")
        _expect(view.owner_state == {}, "no shared state written")
        new = self.new_id()
        _expect_raises(
            StateConflict,
            lambda: store.append("ardian", new, [], state=changes, create="new"),
            "an expect that does not hold on create",
        )
        _expect_raises(ChronicumNotFound, lambda: store.get(new), "no chronicum created")
        held = [self.change(set={"revision": "r2"}, expect={"revision": "r1", "absent": None})]
        store.append("ardian", cid, [], state=held)
        state = store.read_state("ardian", self.namespace, cid, None).chronicum_state
        _expect(state == {"revision": "r2"}, "an expect that holds")

    def test_create_of_a_taken_id_raises_and_changes_nothing(self) -> None:
        store = self.make_store()
        cid = self.fresh(store, "ardian", k="v")
        _expect_raises(
            ChronicumExists,
            lambda: store.append(
                "rafa", cid, [], state=[self.change(set={"k": "x"})], create="new"
            ),
            "a taken ID",
        )
        view = store.read_state("ardian", self.namespace, cid, None)
        _expect(view.chronicum_state == {"k": "v"}, "the state is the first owner's")

    def test_a_replay_changes_no_state_and_another_namespace_conflicts(self) -> None:
        store = self.make_store()
        cid = self.fresh(store)
        first = store.append(
            "ardian", cid, [self.actum(cid)], key="k", state=[self.change(set={"n": 1})]
        )
        store.append("ardian", cid, [], state=[self.change(set={"n": 2})])
        replay = store.append(
            "ardian", cid, [self.actum(cid)], key="k", state=[self.change(set={"n": 3})]
        )
        _expect(replay is not None and replay.replayed, f"a replay: {replay!r}")
        _expect(first is not None and replay is not None and replay.acta == first.acta, "same acta")
        state = store.read_state("ardian", self.namespace, cid, None).chronicum_state
        _expect(state == {"n": 2}, f"a replay changes no state: {state!r}")
        elsewhere = [StateChange(namespace="elsewhere", set={"n": 4})]
        _expect_raises(
            StateConflict,
            lambda: store.append("ardian", cid, [], state=elsewhere),
            "a chronicum's state in a second namespace",
        )

    def test_list_namespace_with_and_without_an_owner(self) -> None:
        store = self.make_store()
        self.namespace = self.new_id("listing")
        a = self.fresh(store, "ardian", n="a")
        b = self.fresh(store, "rafa", n="b")
        store.append(
            "ardian", a, [self.actum(a)], state=[self.change(StateScope.OWNER, set={"o": 1})]
        )
        store.append("rafa", b, [], state=[self.change(StateScope.NAMESPACE, set={"s": 1})])
        everyone = store.list_namespace(None, self.namespace)
        _expect([c.id for c, _ in everyone.chronica] == [b, a], "oldest activity first")
        _expect([s for _, s in everyone.chronica] == [{"n": "b"}, {"n": "a"}], "with their state")
        _expect(everyone.owner_states == {"ardian": {"o": 1}}, f"{everyone.owner_states!r}")
        _expect(everyone.namespace_state == {"s": 1}, "the namespace state")
        rafa = store.list_namespace("rafa", self.namespace)
        _expect([c.id for c, _ in rafa.chronica] == [b] and rafa.owner_states == {}, "rafa's")
        _expect(store.list_namespace(None, self.new_id("empty")).chronica == [], "none")

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
            store.append("ardian", cid, [self.actum(cid, str(i))], state=changes)

        self.run_threads(count, work)
        view = store.read_state("ardian", self.namespace, cid, ActaQuery())
        expected = {f"k{i}": i for i in range(count)}
        _expect(view.chronicum_state == expected, "every chronicum state change")
        _expect(all(view.owner_state.get(k) == v for k, v in expected.items()), "every owner's")
        _expect(all(view.namespace_state.get(f"{cid}-{i}") == i for i in range(count)), "all")
        _expect(len(view.acta or []) == count, "every actum")
