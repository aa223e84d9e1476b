"""The rules of Chronicarius, told as the dinner-friday scenarios, on InMemoryStore and
DjangoStore."""

from __future__ import annotations

import dataclasses
import re
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connections

from chronica import (
    ActorKind,
    Actum,
    ActumKind,
    ChronicumNotFound,
    EmptyOwnerID,
    IdempotencyUnsupported,
    InvalidActum,
)
from chronica.services import Chronicarius

from .. import scenario
from ..scenario import CHRONICUM, OWNER, A, H, M, T
from ..teststores import PlainStore


def record_dinner(c: Chronicarius, chronicum_id: str = CHRONICUM) -> list[Actum]:
    return [c.record_actum(OWNER, a) for a in scenario.acta(chronicum_id)]


def run_threads(count: int, work):
    barrier = threading.Barrier(count)

    def worker(i: int):
        try:
            barrier.wait(timeout=30)
            return work(i)
        except Exception as exc:  # collected, so that one failure shows which
            return exc
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(worker, range(count)))


class TestDinnerFriday:
    def test_seven_acta_in_three_out(self, chronicarius):
        record_dinner(chronicarius)
        window = chronicarius.get_acta(OWNER, CHRONICUM, kinds=[ActumKind.MESSAGE], last_n=3)
        assert [(a.actor, a.content) for a in window] == [
            ("search", "Rumah Teduh and Kayu Manis both have a quiet table for four at 7pm."),
            ("ardian", "Rumah Teduh."),
            ("concierge", "Book Rumah Teduh for four at 7pm on Friday under Ardian."),
        ]

    def test_the_whole_session_comes_back_in_write_order(self, chronicarius):
        stored = record_dinner(chronicarius)
        assert chronicarius.get_acta(OWNER, CHRONICUM) == stored
        assert [a.content for a in stored] == [row[3] for row in scenario.SEVEN]

    def test_the_first_actum_creates_the_chronicum_for_its_owner(self, chronicarius):
        first = chronicarius.record_actum(OWNER, scenario.acta()[0])
        chronicum = chronicarius.get_chronicum(OWNER, CHRONICUM)
        assert chronicum.id == CHRONICUM
        assert chronicum.owner_id == OWNER
        assert chronicum.started_at <= chronicum.last_activity_at == first.at

    def test_rafa_gets_not_found_exactly_as_for_a_session_never_used(self, chronicarius):
        record_dinner(chronicarius)
        errors = []
        for chronicum_id in (CHRONICUM, "never-used"):
            with pytest.raises(ChronicumNotFound) as caught:
                chronicarius.get_acta("rafa", chronicum_id)
            errors.append(caught.value)
            with pytest.raises(ChronicumNotFound):
                chronicarius.get_chronicum("rafa", chronicum_id)
        assert [type(e) for e in errors] == [ChronicumNotFound, ChronicumNotFound]
        assert str(errors[0]).replace(CHRONICUM, "X") == str(errors[1]).replace("never-used", "X")

    def test_rafa_cannot_write_into_ardians_session(self, chronicarius):
        record_dinner(chronicarius)
        intruder = dataclasses.replace(scenario.booking_reply(), actor="rafa")
        with pytest.raises(ChronicumNotFound):
            chronicarius.record_actum("rafa", intruder)
        assert len(chronicarius.get_acta(OWNER, CHRONICUM)) == 7

    def test_the_reworded_booking_reply_is_discarded(self, chronicarius):
        record_dinner(chronicarius)
        first = chronicarius.record_actum(
            OWNER, scenario.booking_reply(), idempotency_key="booking-reply-1"
        )
        retry = chronicarius.record_actum(
            OWNER,
            scenario.booking_reply(scenario.BOOKING_REPLY_REWORDED),
            idempotency_key="booking-reply-1",
        )
        assert retry == first
        assert retry.content == scenario.BOOKING_REPLY
        acta = chronicarius.get_acta(OWNER, CHRONICUM)
        assert len(acta) == 8
        assert acta[-1] == first

    def test_an_empty_key_is_no_key(self, chronicarius):
        reply = scenario.booking_reply()
        one = chronicarius.record_actum(OWNER, reply, idempotency_key="")
        two = chronicarius.record_actum(OWNER, reply, idempotency_key="")
        assert one.id != two.id
        assert len(chronicarius.get_acta(OWNER, CHRONICUM)) == 2

    def test_every_actum_gets_a_new_id(self, chronicarius):
        sent = dataclasses.replace(scenario.acta()[0], id="chosen-by-caller")
        stored = chronicarius.record_actum(OWNER, sent)
        again = chronicarius.record_actum(OWNER, sent)
        assert stored.id != "chosen-by-caller"
        assert re.fullmatch(r"[0-9a-f]{32}", stored.id)
        assert again.id != stored.id

    def test_id_factory(self, store):
        ids = iter(f"a{i}" for i in range(1, 8))
        c = Chronicarius(store, id_factory=lambda: next(ids))
        assert [a.id for a in record_dinner(c)[:2]] == ["a1", "a2"]

    def test_acta_come_back_with_enum_members(self, chronicarius):
        sent = Actum(
            chronicum_id=CHRONICUM,
            kind="thought",
            actor_kind="agent",
            actor="concierge",
            content="Search first.",
        )
        stored = chronicarius.record_actum(OWNER, sent)
        (read,) = chronicarius.get_acta(OWNER, CHRONICUM)
        for actum in (stored, read):
            assert actum.kind is ActumKind.THOUGHT
            assert actum.actor_kind is ActorKind.AGENT


class TestContextWindow:
    @pytest.fixture
    def dinner(self, chronicarius):
        record_dinner(chronicarius)
        return chronicarius

    def window(self, c, **kwargs):
        return [a.content for a in c.get_acta(OWNER, CHRONICUM, **kwargs)]

    def test_filters_run_before_the_limit(self, dinner):
        assert (
            self.window(dinner, kinds=[M, T], last_n=2)
            == self.window(dinner, kinds=["message"])[-2:]
        )
        assert len(self.window(dinner, kinds=[M], last_n=4)) == 4

    @pytest.mark.parametrize("last_n", [0, -1, -100])
    def test_a_limit_of_zero_or_less_is_no_limit(self, dinner, last_n):
        assert len(self.window(dinner, last_n=last_n)) == 7

    def test_actor_kinds(self, dinner):
        assert self.window(dinner, actor_kinds=[H]) == [scenario.SEVEN[0][3], "Rumah Teduh."]
        assert len(self.window(dinner, actor_kinds=["agent"], kinds=["message"])) == 2

    def test_strings_and_single_values_are_accepted(self, dinner):
        assert self.window(dinner, kinds="thought") == [scenario.SEVEN[1][3]]
        assert self.window(dinner, kinds=ActumKind.THOUGHT) == [scenario.SEVEN[1][3]]
        assert self.window(dinner, actor_kinds=(a for a in ["human"])) == self.window(
            dinner, actor_kinds=[H]
        )

    @pytest.mark.parametrize(
        "kwargs",
        [
            {"kinds": ["email"]},
            {"kinds": ["message", "MESSAGE"]},
            {"actor_kinds": ["robot"]},
            {"actor_kinds": "humans"},
            {"last_n": "3"},
            {"last_n": 2.5},
            {"last_n": True},
        ],
    )
    def test_an_unknown_filter_is_a_value_error(self, dinner, kwargs):
        with pytest.raises(ValueError, match=r"kind|last_n"):
            dinner.get_acta(OWNER, CHRONICUM, **kwargs)

    def test_an_unknown_filter_on_a_missing_chronicum_is_still_a_value_error(self, chronicarius):
        with pytest.raises(ValueError, match="unknown kind"):
            chronicarius.get_acta(OWNER, "never-used", kinds=["email"])


class TestValidation:
    def base(self, **changes) -> Actum:
        fields = {
            "chronicum_id": CHRONICUM,
            "kind": M,
            "actor_kind": H,
            "actor": "ardian",
            "content": "Hi.",
        }
        fields.update(changes)
        return Actum(**fields)

    @pytest.mark.parametrize(
        ("changes", "message"),
        [
            ({"chronicum_id": ""}, "chronicum_id is empty"),
            ({"actor": ""}, "actor is empty"),
            ({"kind": "email"}, "unknown kind 'email'"),
            ({"kind": None}, "unknown kind None"),
            ({"actor_kind": "robot"}, "unknown actor_kind 'robot'"),
            ({"content": ""}, "content is empty"),
            ({"content": "", "kind": T}, "content is empty"),
            ({"chronicum_id": "x" * 256}, "chronicum_id is longer than 255 characters"),
            ({"actor": "x" * 256}, "actor is longer than 255 characters"),
            ({"chronicum_id": "dinner\x00friday"}, "chronicum_id contains a NUL character"),
            ({"actor": "ardi\x00an"}, "actor contains a NUL character"),
            ({"content": "Hi\x00."}, "content contains a NUL character"),
            ({"content": None}, "content must be a string, not NoneType"),
            ({"actor": 7}, "actor must be a string, not int"),
            ({"chronicum_id": b"dinner"}, "chronicum_id must be a string, not bytes"),
        ],
    )
    def test_invalid_acta_are_refused_and_nothing_is_written(self, chronicarius, changes, message):
        with pytest.raises(InvalidActum, match=re.escape(message)):
            chronicarius.record_actum(OWNER, self.base(**changes))
        with pytest.raises(ChronicumNotFound):
            chronicarius.get_chronicum(OWNER, CHRONICUM)

    @pytest.mark.parametrize(
        ("owner", "key", "message"),
        [
            ("x" * 256, None, "owner_id is longer than 255 characters"),
            ("ard\x00ian", None, "owner_id contains a NUL character"),
            (42, None, "owner_id must be a string, not int"),
            (OWNER, "k" * 256, "idempotency_key is longer than 255 characters"),
            (OWNER, "booking\x00reply", "idempotency_key contains a NUL character"),
            (OWNER, 1, "idempotency_key must be a string, not int"),
        ],
    )
    def test_invalid_owner_or_key(self, chronicarius, owner, key, message):
        with pytest.raises(InvalidActum, match=re.escape(message)):
            chronicarius.record_actum(owner, self.base(), idempotency_key=key)
        with pytest.raises(ChronicumNotFound):
            chronicarius.get_chronicum(OWNER, CHRONICUM)

    def test_not_an_actum(self, chronicarius):
        with pytest.raises(InvalidActum, match=r"must be a chronica\.Actum"):
            chronicarius.record_actum(OWNER, {"chronicum_id": CHRONICUM})

    @pytest.mark.parametrize("kind", [ActumKind.TOOL_REQUEST, ActumKind.TOOL_RESPONSE])
    def test_tool_acta_may_be_empty(self, chronicarius, kind):
        stored = chronicarius.record_actum(OWNER, self.base(kind=kind, actor_kind=A, content=""))
        assert stored.content == ""

    def test_255_characters_are_fine(self, chronicarius):
        long = "x" * 255
        stored = chronicarius.record_actum(
            long, self.base(chronicum_id=long, actor=long), idempotency_key=long
        )
        assert chronicarius.get_acta(long, long) == [stored]

    @pytest.mark.parametrize("owner", ["", None])
    def test_every_call_names_an_owner(self, chronicarius, owner):
        with pytest.raises(EmptyOwnerID):
            chronicarius.record_actum(owner, self.base())
        with pytest.raises(EmptyOwnerID):
            chronicarius.get_acta(owner, CHRONICUM)
        with pytest.raises(EmptyOwnerID):
            chronicarius.get_chronicum(owner, CHRONICUM)
        with pytest.raises(ChronicumNotFound):
            chronicarius.get_chronicum(OWNER, CHRONICUM)

    @pytest.mark.parametrize("chronicum_id", ["x" * 256, "dinner\x00friday", ""])
    def test_reading_an_id_no_store_can_hold_is_not_found(self, chronicarius, chronicum_id):
        with pytest.raises(ChronicumNotFound):
            chronicarius.get_acta(OWNER, chronicum_id)
        with pytest.raises(ChronicumNotFound):
            chronicarius.get_chronicum("ardi\x00an", CHRONICUM)

    def test_reading_with_a_wrong_type_is_a_value_error(self, chronicarius):
        with pytest.raises(ValueError, match="chronicum_id must be a string"):
            chronicarius.get_acta(OWNER, 7)
        with pytest.raises(ValueError, match="owner_id must be a string"):
            chronicarius.get_chronicum(7, CHRONICUM)


class TestIdempotencyUnsupported:
    def test_raised_before_anything_is_created(self):
        store = PlainStore()
        c = Chronicarius(store)
        with pytest.raises(IdempotencyUnsupported):
            c.record_actum(OWNER, scenario.booking_reply(), idempotency_key="booking-reply-1")
        assert store.calls == []
        with pytest.raises(ChronicumNotFound):
            c.get_chronicum(OWNER, CHRONICUM)

    def test_without_a_key_a_plain_store_works(self):
        c = Chronicarius(PlainStore())
        assert c.record_actum(OWNER, scenario.booking_reply(), idempotency_key="").content


class TestRaces:
    def test_twenty_concurrent_first_writes_by_one_owner_all_land(self, chronicarius):
        results = run_threads(
            20,
            lambda i: chronicarius.record_actum(
                OWNER, dataclasses.replace(scenario.booking_reply(), content=f"reply {i}")
            ),
        )
        assert [r for r in results if isinstance(r, BaseException)] == []
        stored = chronicarius.get_acta(OWNER, CHRONICUM)
        assert sorted(a.content for a in stored) == sorted(f"reply {i}" for i in range(20))
        assert chronicarius.get_chronicum(OWNER, CHRONICUM).owner_id == OWNER

    def test_two_owners_racing_for_one_new_id(self, chronicarius):
        owners = ["ardian", "rafa"] * 5
        results = run_threads(
            len(owners),
            lambda i: chronicarius.record_actum(
                owners[i],
                dataclasses.replace(scenario.booking_reply(), content=f"{owners[i]} {i}"),
            ),
        )
        winner = next(o for o in ("ardian", "rafa") if _owns(chronicarius, o))
        loser = "rafa" if winner == "ardian" else "ardian"
        for owner, result in zip(owners, results, strict=True):
            if owner == winner:
                assert isinstance(result, Actum), result
            else:
                assert isinstance(result, ChronicumNotFound), result
        stored = chronicarius.get_acta(winner, CHRONICUM)
        assert sorted(a.content for a in stored) == sorted(
            f"{winner} {i}" for i, o in enumerate(owners) if o == winner
        )
        with pytest.raises(ChronicumNotFound):
            chronicarius.get_acta(loser, CHRONICUM)


def _owns(c: Chronicarius, owner: str) -> bool:
    try:
        c.get_chronicum(owner, CHRONICUM)
    except ChronicumNotFound:
        return False
    return True


class TestErrorsPassThrough:
    def test_a_store_error_comes_back_as_it_was_raised(self):
        class Broken(PlainStore):
            def get(self, chronicum_id):
                raise ConnectionResetError("the database went away")

        boom = Broken()
        with pytest.raises(ConnectionResetError, match="went away"):
            Chronicarius(boom).get_acta(OWNER, CHRONICUM)
        with pytest.raises(ConnectionResetError):
            Chronicarius(boom).record_actum(OWNER, scenario.booking_reply())


class TestAsync:
    async def test_async_twins_on_the_memory_store(self):
        from chronica.stores.memory import InMemoryStore

        c = Chronicarius(InMemoryStore())
        first = await c.arecord_actum(OWNER, scenario.booking_reply(), idempotency_key="k")
        again = await c.arecord_actum(OWNER, scenario.booking_reply("x"), idempotency_key="k")
        assert again == first
        assert await c.aget_acta(OWNER, CHRONICUM, kinds=["message"], last_n=1) == [first]
        assert (await c.aget_chronicum(OWNER, CHRONICUM)).owner_id == OWNER
        with pytest.raises(ChronicumNotFound):
            await c.aget_chronicum("rafa", CHRONICUM)


@pytest.mark.parametrize("last_n", [2**63 - 1, 2**63, 10**30])
def test_a_limit_beyond_any_session_returns_everything(chronicarius, last_n):
    record_dinner(chronicarius)
    assert len(chronicarius.get_acta(OWNER, CHRONICUM, last_n=last_n)) == 7
