"""State beside the acta (``supports_state``): the rules Chronicarius keeps on top of
the stores (the conformance suite runs on both in tests/stores/test_conformance.py)."""

from __future__ import annotations

import pytest

from chronica.errors import ChronicumExists, ChronicumNotFound, InvalidActum, StateConflict
from chronica.services import Chronicarius
from chronica.stores.db import DjangoStore
from chronica.stores.memory import InMemoryStore
from chronica.values import Actum, StateChange, StateScope


def test_both_stores_are_state_stores():
    """DjangoStore itself, as CHRONICA["STORE"] configures it by default: no subclass."""
    assert getattr(InMemoryStore(), "supports_state", False)
    assert getattr(DjangoStore(), "supports_state", False)


def message(chronicum_id: str, text: str = "hi") -> Actum:
    return Actum(
        chronicum_id=chronicum_id, kind="message", actor_kind="human", actor="ardian", content=text
    )


@pytest.fixture
def chronicarius(store):
    if not isinstance(store, InMemoryStore):
        store = DjangoStore()
    return Chronicarius(store)


class TestRules:
    def test_a_session_and_its_state(self, chronicarius):
        change = StateChange(namespace="dinner", set={"party": 4})
        chronicarius.update_state("ardian", "dinner-friday", [change], create=True)
        with pytest.raises(ChronicumExists):
            chronicarius.update_state("rafa", "dinner-friday", [change], create=True)
        chronicarius.record_acta(
            "ardian",
            [message("dinner-friday")],
            state=[StateChange(namespace="dinner", scope="owner", set={"name": "Ardian"})],
        )

        view = chronicarius.get_state("ardian", "dinner", "dinner-friday", acta=True)
        assert view.chronicum_state == {"party": 4}
        assert view.owner_state == {"name": "Ardian"}
        assert [a.content for a in view.acta] == ["hi"]
        assert chronicarius.get_state("rafa", "dinner", "dinner-friday").chronicum is None
        assert [c.id for c, _ in chronicarius.list_namespace(None, "dinner").chronica] == [
            "dinner-friday"
        ]
        assert chronicarius.list_namespace("rafa", "dinner").chronica == []
        # The earlier shape, namespace first, still works for a release.
        with pytest.warns(DeprecationWarning, match="list_namespace"):
            assert chronicarius.list_namespace("dinner", owner_id="rafa").chronica == []

    def test_a_chronicum_id_no_store_can_hold_reads_the_rest_only(self, chronicarius):
        """A NUL in the ID: no chronicum, the owner's state still (PostgreSQL's text
        refuses a NUL; the read must not send one)."""
        owner = StateChange(namespace="dinner", scope="owner", set={"name": "Ardian"})
        chronicarius.update_state("ardian", "dinner-friday", [owner], create=True)
        view = chronicarius.get_state("ardian", "dinner", "dinner\x00friday", acta=True)
        assert view.chronicum is None
        assert view.acta is None
        assert view.owner_state == {"name": "Ardian"}

    @pytest.mark.parametrize("last_n", [0, 1, 3, 5, 9])
    def test_the_window_read_with_the_state(self, chronicarius, last_n):
        """``acta=True``: the newest ``last_n`` acta (``0``: all), oldest first, in the
        read that finds the chronicum; none for someone else's; ``[]`` for an empty one."""
        change = StateChange(namespace="dinner", set={"party": 4})
        chronicarius.update_state("ardian", "dinner-friday", [change], create=True)
        chronicarius.update_state("ardian", "dinner-empty", [change], create=True)
        texts = [f"turn {n}" for n in range(5)]
        chronicarius.record_acta("ardian", [message("dinner-friday", t) for t in texts])

        view = chronicarius.get_state("ardian", "dinner", "dinner-friday", acta=True, last_n=last_n)
        assert [a.content for a in view.acta] == (texts[-last_n:] if last_n else texts)
        assert {a.chronicum_id for a in view.acta} == {"dinner-friday"}
        assert view.chronicum_state == {"party": 4}
        assert (
            chronicarius.get_state(
                "ardian", "dinner", "dinner-empty", acta=True, last_n=last_n
            ).acta
            == []
        )
        other = chronicarius.get_state("rafa", "dinner", "dinner-friday", acta=True, last_n=last_n)
        assert (other.chronicum, other.chronicum_state, other.acta) == (None, None, None)
        missing = chronicarius.get_state("ardian", "dinner", "dinner-gone", acta=True)
        assert (missing.chronicum, missing.acta) == (None, None)

    def test_the_window_and_the_state_in_one_statement(self, chronicarius):
        if not isinstance(chronicarius.store, DjangoStore):
            pytest.skip("the statements of the Django store; the in-memory store sends none")
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        change = StateChange(namespace="dinner", set={"party": 4})
        chronicarius.update_state("ardian", "dinner-friday", [change], create=True)
        chronicarius.record_acta("ardian", [message("dinner-friday", f"{n}") for n in range(4)])
        with CaptureQueriesContext(connection) as ctx:
            view = chronicarius.get_state("ardian", "dinner", "dinner-friday", acta=True, last_n=2)
        assert [a.content for a in view.acta] == ["2", "3"]
        assert len(ctx.captured_queries) == 1

    def test_a_write_with_state_never_creates_its_chronicum(self, chronicarius):
        with pytest.raises(ChronicumNotFound):
            chronicarius.record_acta(
                "ardian", [message("new")], state=[StateChange(namespace="dinner", set={"a": 1})]
            )
        with pytest.raises(ChronicumNotFound):
            chronicarius.get_chronicum("ardian", "new")
        with pytest.raises(ChronicumNotFound):
            chronicarius.update_state("ardian", "new", [StateChange(namespace="dinner")])

    def test_a_failed_expectation_is_state_conflict_and_writes_nothing(self, chronicarius):
        chronicarius.update_state(
            "ardian", "s", [StateChange(namespace="dinner", set={"v": 1})], create=True
        )
        with pytest.raises(StateConflict):
            chronicarius.record_acta(
                "ardian",
                [message("s")],
                state=[StateChange(namespace="dinner", set={"v": 3}, expect={"v": 2})],
            )
        assert chronicarius.get_acta("ardian", "s") == []

    @pytest.mark.parametrize(
        "change",
        [
            StateChange(namespace=""),
            StateChange(namespace="a\nb"),
            StateChange(namespace="dinner", set={"nan": float("nan")}),
            StateChange(namespace="dinner", set={"nul": "\x00"}),
            StateChange(namespace="dinner", set={1: "int key"}),  # type: ignore[dict-item]
            StateChange(namespace="dinner", path=("a", 1)),  # type: ignore[arg-type]
            StateChange(namespace="dinner", scope="everyone"),  # type: ignore[arg-type]
            StateChange(namespace="dinner", expect=[]),  # type: ignore[arg-type]
        ],
    )
    def test_bad_state_is_invalid_and_nothing_is_written(self, chronicarius, change):
        with pytest.raises(InvalidActum):
            chronicarius.update_state("ardian", "s", [change], create=True)
        with pytest.raises(ChronicumNotFound):
            chronicarius.get_chronicum("ardian", "s")

    def test_one_namespace_per_write_for_the_chronicum(self, chronicarius):
        with pytest.raises(InvalidActum):
            chronicarius.update_state(
                "ardian",
                "s",
                [StateChange(namespace="a"), StateChange(namespace="b")],
                create=True,
            )
        chronicarius.update_state(
            "ardian",
            "s",
            [StateChange(namespace="a"), StateChange(namespace="b", scope=StateScope.NAMESPACE)],
            create=True,
        )

    def test_a_store_without_state_says_so(self):
        from chronica.errors import StoreUnsupported

        class Plain(InMemoryStore):
            supports_state = False

        with pytest.raises(StoreUnsupported, match="supports_state"):
            Chronicarius(Plain()).get_state("ardian", "dinner")
