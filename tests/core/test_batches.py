"""Structured acta and batches: call_id, data and record_acta, on both stores and databases."""

from __future__ import annotations

import dataclasses

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronica import (
    Actum,
    ChronicumNotFound,
    InvalidActum,
    RecordedActa,
    StoreUnsupported,
    services,
)
from chronica.services import Chronicarius
from chronica.stores.db import DjangoStore

from .. import scenario
from ..scenario import CHRONICUM, OWNER, REQ, RES, A, M
from ..teststores import PlainStore
from .test_chronicarius import run_threads


def turn(chronicum_id: str = CHRONICUM, label: str = "") -> list[Actum]:
    """The search agent's turn: it thinks, calls a tool, reads the result, answers."""
    return [
        Actum(chronicum_id=chronicum_id, kind="thought", actor_kind=A, actor="search",
              content=f"Look for quiet tables.{label}"),
        Actum(chronicum_id=chronicum_id, kind=REQ, actor_kind=A, actor="search",
              content='search_places({"area":"Kemang","party":4})', call_id="call-kemang",
              data={"type": "function_call", "name": "search_places",
                    "arguments": '{"area":"Kemang","party":4}', "call_id": "call-kemang"}),
        Actum(chronicum_id=chronicum_id, kind=RES, actor_kind=A, actor="search",
              content="Rumah Teduh, Kayu Manis", call_id="call-kemang",
              data={"type": "function_call_output", "call_id": "call-kemang",
                    "output": [{"name": "Rumah Teduh", "table": True},
                               {"name": "Kayu Manis", "table": True}]}),
        Actum(chronicum_id=chronicum_id, kind=M, actor_kind=A, actor="search",
              content=f"Rumah Teduh and Kayu Manis both have a table.{label}"),
    ]  # fmt: skip


class TestRecordActa:
    def test_a_turn_lands_whole_in_order_with_new_ids(self, chronicarius):
        first = chronicarius.record_actum(OWNER, scenario.acta()[0])
        stored = chronicarius.record_acta(OWNER, turn())
        assert [(a.kind, a.content, a.call_id, a.data) for a in stored] == [
            (a.kind, a.content, a.call_id, a.data) for a in turn()
        ]
        assert len({a.id for a in stored}) == 4
        assert len({a.at for a in stored}) == 1
        assert chronicarius.get_acta(OWNER, CHRONICUM) == [first, *stored]
        assert chronicarius.get_chronicum(OWNER, CHRONICUM).last_activity_at == stored[0].at

    def test_the_first_batch_creates_the_chronicum(self, chronicarius):
        stored = chronicarius.record_acta(OWNER, turn())
        assert chronicarius.get_chronicum(OWNER, CHRONICUM).owner_id == OWNER
        assert chronicarius.get_acta(OWNER, CHRONICUM) == stored

    def test_an_empty_batch_writes_and_creates_nothing(self, chronicarius):
        assert chronicarius.record_acta(OWNER, []) == []
        assert chronicarius.record_acta(OWNER, [], idempotency_key="turn-1") == []
        empty = chronicarius.record_acta(OWNER, [])
        assert (empty, empty.replayed) == ([], False)
        with pytest.raises(ChronicumNotFound):
            chronicarius.get_chronicum(OWNER, CHRONICUM)

    def test_one_bad_actum_and_nothing_is_written(self, chronicarius):
        chronicarius.record_actum(OWNER, scenario.acta()[0])
        before = chronicarius.get_acta(OWNER, CHRONICUM)
        bad = [*turn()[:3], dataclasses.replace(turn()[3], content="")]
        with pytest.raises(InvalidActum, match=r"^actum 3: content is empty"):
            chronicarius.record_acta(OWNER, bad)
        with pytest.raises(InvalidActum, match=r"^actum 0: "):
            chronicarius.record_acta(OWNER, [dataclasses.replace(turn()[0], call_id="c"), *turn()])
        assert chronicarius.get_acta(OWNER, CHRONICUM) == before

    def test_a_batch_goes_into_one_chronicum(self, chronicarius):
        mixed = [*turn(), *turn("dinner-saturday")]
        with pytest.raises(InvalidActum, match="a batch goes into one chronicum"):
            chronicarius.record_acta(OWNER, mixed)
        for chronicum_id in (CHRONICUM, "dinner-saturday"):
            with pytest.raises(ChronicumNotFound):
                chronicarius.get_chronicum(OWNER, chronicum_id)

    @pytest.mark.parametrize("acta", [scenario.acta()[0], "turn", None, {"kind": "message"}])
    def test_not_a_list_of_acta(self, chronicarius, acta):
        with pytest.raises(
            InvalidActum, match=r"must be a list of chronica\.Actum|must be a chronica\.Actum"
        ):
            chronicarius.record_acta(OWNER, acta)

    def test_a_generator_of_acta_is_a_batch(self, chronicarius):
        stored = chronicarius.record_acta(OWNER, (a for a in turn()))
        assert len(stored) == 4

    def test_rafa_cannot_write_a_batch_into_ardians_session(self, chronicarius):
        chronicarius.record_acta(OWNER, turn())
        with pytest.raises(ChronicumNotFound):
            chronicarius.record_acta("rafa", turn())
        with pytest.raises(ChronicumNotFound):
            chronicarius.record_acta("rafa", turn(), idempotency_key="turn-1")
        assert len(chronicarius.get_acta(OWNER, CHRONICUM)) == 4


class TestKeyedBatches:
    def test_a_keyed_turn_is_recorded_once_and_replayed_whole(self, chronicarius):
        first = chronicarius.record_acta(OWNER, turn(), idempotency_key="search-turn-1")
        assert not first.replayed
        for retry in (turn(label=" (again)"), turn()[:2], [*turn(), *turn()]):
            replay = chronicarius.record_acta(OWNER, retry, idempotency_key="search-turn-1")
            assert (replay, replay.replayed) == (first, True)
        assert chronicarius.get_acta(OWNER, CHRONICUM) == first

    def test_record_actum_with_a_batchs_key_returns_its_first_actum(self, chronicarius):
        first = chronicarius.record_acta(OWNER, turn(), idempotency_key="search-turn-1")
        again = chronicarius.record_actum(
            OWNER, scenario.booking_reply(), idempotency_key="search-turn-1"
        )
        assert again == first[0]

    def test_a_batch_with_the_key_of_a_single_actum_replays_it(self, chronicarius):
        reply = chronicarius.record_actum(
            OWNER, scenario.booking_reply(), idempotency_key="booking-reply-1"
        )
        replay = chronicarius.record_acta(OWNER, turn(), idempotency_key="booking-reply-1")
        assert (replay, replay.replayed) == ([reply], True)

    def test_keys_belong_to_one_chronicum(self, chronicarius):
        chronicarius.record_acta(OWNER, turn(), idempotency_key="turn-1")
        other = chronicarius.record_acta(OWNER, turn("dinner-saturday"), idempotency_key="turn-1")
        assert not other.replayed

    def test_a_popped_batch_is_replayed_as_what_is_left(self, chronicarius):
        first = chronicarius.record_acta(OWNER, turn(), idempotency_key="turn-1")
        assert chronicarius.pop_actum(OWNER, CHRONICUM) == first[-1]
        replay = chronicarius.record_acta(OWNER, turn(), idempotency_key="turn-1")
        assert (replay, replay.replayed) == (first[:-1], True)
        for _ in range(3):
            chronicarius.pop_actum(OWNER, CHRONICUM)
        # Once its first actum is gone the key names nothing: the turn is recorded anew.
        anew = chronicarius.record_acta(OWNER, turn(), idempotency_key="turn-1")
        assert not anew.replayed
        assert chronicarius.get_acta(OWNER, CHRONICUM) == anew


class TestPlainStores:
    def test_a_store_without_batches_refuses_a_batch_before_writing(self):
        store = PlainStore()
        c = Chronicarius(store)
        with pytest.raises(StoreUnsupported, match="cannot record a batch"):
            c.record_acta(OWNER, turn())
        assert store.calls == []

    def test_a_store_without_batches_takes_a_batch_of_one(self):
        c = Chronicarius(PlainStore())
        [stored] = c.record_acta(OWNER, turn()[:1])
        assert c.get_acta(OWNER, CHRONICUM) == [stored]


@pytest.mark.slow
class TestConcurrentBatches:
    def test_eight_writers_fifty_batches_of_five_each_contiguous(self, chronicarius):
        chronicarius.create_chronicum(OWNER, CHRONICUM)

        def write(writer: int) -> int:
            for n in range(50):
                chronicarius.record_acta(
                    OWNER,
                    [
                        dataclasses.replace(scenario.booking_reply(), content=f"w{writer} b{n} {i}")
                        for i in range(5)
                    ],
                )
            return writer

        results = run_threads(8, write)
        assert results == list(range(8)), results
        acta = chronicarius.get_acta(OWNER, CHRONICUM)
        assert len(acta) == 8 * 50 * 5
        for start in range(0, len(acta), 5):
            words = [a.content.split() for a in acta[start : start + 5]]
            assert len({(w[0], w[1]) for w in words}) == 1, words
            assert [w[2] for w in words] == ["0", "1", "2", "3", "4"], words
        assert len({a.id for a in acta}) == len(acta)

    def test_forty_threads_one_keyed_batch(self, chronicarius):
        results = run_threads(
            40,
            lambda i: chronicarius.record_acta(
                OWNER, turn(label=f" {i}"), idempotency_key="turn-1"
            ),
        )
        assert all(isinstance(r, RecordedActa) for r in results), results
        stored = chronicarius.get_acta(OWNER, CHRONICUM)
        assert len(stored) == 4
        assert all(r == stored for r in results)
        assert sum(not r.replayed for r in results) == 1


# -- rows written by a writer that knows only the original columns ---------------


@pytest.mark.django_db(transaction=True)
def test_rows_of_a_writer_that_knows_only_the_original_columns_read_back():
    # The Go library's PostgreSQL store writes these columns and no others.
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO chronica (id, owner_id, started_at, last_activity_at)"
            " VALUES (%s, %s, %s, %s)",
            ["go-dinner", OWNER, "2026-06-07 19:00:00+00:00", "2026-06-07 19:00:01+00:00"],
        )
        for n, (kind, content, key) in enumerate(
            [
                ("message", "Find us a quiet table for four in Kemang.", None),
                ("tool_request", '{"area":"Kemang"}', None),
                ("message", "Rumah Teduh is held.", "booking-reply-1"),
            ]
        ):
            cursor.execute(
                "INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at,"
                " idempotency_key) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                [f"go-{n}", "go-dinner", kind, "agent", "concierge", content,
                 f"2026-06-07 19:00:0{n}+00:00", key],
            )  # fmt: skip
    acta = services.get_acta(OWNER, "go-dinner")
    assert [(a.id, a.call_id, a.data) for a in acta] == [
        ("go-0", "", None),
        ("go-1", "", None),
        ("go-2", "", None),
    ]
    # Without a stored count, an actum costs 4 + ceil(bytes / 3.5): 10 for the reply (20
    # bytes), 9 for the tool request (17 bytes).
    assert [a.id for a in services.get_acta(OWNER, "go-dinner", max_tokens=18)] == ["go-2"]
    assert [a.id for a in services.get_acta(OWNER, "go-dinner", max_tokens=19)] == [
        "go-1",
        "go-2",
    ]
    # The Go writer's key is honoured: a retry with it replays its actum.
    again = services.record_actum(
        OWNER, scenario.booking_reply(chronicum_id="go-dinner"), idempotency_key="booking-reply-1"
    )
    assert again == acta[-1]
    assert services.get_acta(OWNER, "go-dinner", before="go-2") == acta[:2]


# -- data round-trips equal on both databases ------------------------------------

json_text = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"))
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**53, max_value=2**200),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1e16, -1.5e300, 5e-324, 0.1, -0.0, 1.0, 2.0**53 + 2]),
    json_text,
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5), st.dictionaries(json_text, children, max_size=5)
    ),
    max_leaves=25,
)


def same_json(a, b) -> bool:
    """Equal, and of the same JSON types all the way down (1.0 is not 1; True is not 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    return a == b  # for floats too: PostgreSQL's numbers have no negative zero


@pytest.mark.django_db(transaction=True)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=json_values)
def test_data_round_trips_equal_on_the_database(data):
    c = Chronicarius(DjangoStore())
    sent = dataclasses.replace(turn()[2], data=data)
    [stored] = c.record_acta(OWNER, [sent])
    [read] = c.get_acta(OWNER, CHRONICUM, last_n=1)
    assert same_json(read.data, data), (read.data, data)
    assert read == stored


@pytest.mark.parametrize(
    "data",
    [
        {"nested": {"deep": [[{"x": [1, [2, [3]]]}]]}},
        "a bare string",
        {},
        [],
        0,
        False,
        {"encrypted_content": "gAAAAB" + "x" * 10_000, "summary": [{"text": "🍽 Rumah Teduh"}]},
        {"int": 2**64 + 1, "negative": -(2**70), "float": 1e300, "small": 1.5e-7},
    ],
    ids=["nested", "string", "empty-object", "empty-list", "zero", "false", "reasoning", "numbers"],
)
def test_data_examples_round_trip(chronicarius, data):
    [stored] = chronicarius.record_acta(OWNER, [dataclasses.replace(turn()[1], data=data)])
    [read] = chronicarius.get_acta(OWNER, CHRONICUM)
    assert same_json(read.data, data)
    assert read == stored
