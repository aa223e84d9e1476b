"""chronica.signals: sent once per newly stored actum (or deleted chronicum), after commit.

A Django app hooks "the concierge wrote" without polling. The signal comes after the
transaction that stored the actum commits: inside the app's own ``atomic()`` block,
at that block's commit; after a rollback, never; never for an idempotent replay.
A receiver that raises cannot undo the write, and the writer is not told: the write
has committed and the call returns it; the error goes to the ``chronica`` logger and
the other receivers still run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

import pytest
from asgiref.sync import sync_to_async
from django.db import connection, connections, transaction

from chronica import Actum, ChronicumNotFound, services
from chronica.services import Chronicarius
from chronica.signals import actum_recorded, chronicum_deleted

from .. import scenario
from ..scenario import CHRONICUM, OWNER

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "booking-reply-1"


class Receiver:
    """Keeps what each signal carried, and whether the writing transaction was still open."""

    def __init__(self, *, fail: bool = False) -> None:
        self.fail = fail
        self.calls: list[dict] = []

    def __call__(self, sender, **kwargs) -> None:
        self.calls.append({"sender": sender, "in_atomic": connection.in_atomic_block, **kwargs})
        if self.fail:
            raise RuntimeError("the notifier is down")

    @property
    def acta(self) -> list[Actum]:
        return [call["actum"] for call in self.calls]


@pytest.fixture(autouse=True)
def fresh_chronicarius() -> Iterator[None]:
    services.reset_chronicarius()
    yield
    services.reset_chronicarius()


@pytest.fixture
def recorded() -> Iterator[Receiver]:
    receiver = Receiver()
    actum_recorded.connect(receiver, weak=False)
    yield receiver
    actum_recorded.disconnect(receiver)


@pytest.fixture
def deleted() -> Iterator[Receiver]:
    receiver = Receiver()
    chronicum_deleted.connect(receiver, weak=False)
    yield receiver
    chronicum_deleted.disconnect(receiver)


@pytest.fixture
def failing() -> Iterator[Receiver]:
    receiver = Receiver(fail=True)
    actum_recorded.connect(receiver, weak=False)
    chronicum_deleted.connect(receiver, weak=False)
    yield receiver
    actum_recorded.disconnect(receiver)
    chronicum_deleted.disconnect(receiver)


def test_one_signal_per_actum_of_dinner_friday_in_write_order(recorded):
    stored = [services.record_actum(OWNER, a) for a in scenario.acta()]

    assert recorded.acta == stored
    assert {call["owner_id"] for call in recorded.calls} == {OWNER}
    assert {call["sender"] for call in recorded.calls} == {Chronicarius}
    assert not any(call["in_atomic"] for call in recorded.calls)


def test_a_batch_sends_one_signal_per_actum(recorded):
    stored = services.record_acta(OWNER, scenario.acta())
    assert recorded.acta == stored


def test_a_replay_sends_nothing(recorded):
    first = services.record_actum(OWNER, scenario.booking_reply(), idempotency_key=KEY)
    reworded = scenario.booking_reply(scenario.BOOKING_REPLY_REWORDED)
    assert services.record_actum(OWNER, reworded, idempotency_key=KEY) == first
    assert recorded.acta == [first]


def test_inside_the_apps_atomic_block_the_signal_waits_for_its_commit(recorded):
    with transaction.atomic():
        reply = services.record_actum(OWNER, scenario.booking_reply())
        assert recorded.calls == []
    assert recorded.acta == [reply]
    assert recorded.calls[0]["in_atomic"] is False


def test_a_receiver_reads_the_committed_actum(recorded):
    seen: list[list[Actum]] = []

    def reread(sender, *, owner_id, actum, **kwargs):
        seen.append(services.get_acta(owner_id, actum.chronicum_id))

    actum_recorded.connect(reread, weak=False)
    try:
        with transaction.atomic():
            reply = services.record_actum(OWNER, scenario.booking_reply())
    finally:
        actum_recorded.disconnect(reread)
    assert seen == [[reply]]


class Abandon(Exception):
    """The app changes its mind: its atomic() block rolls back."""


def abandoned(write: Callable[[], object]) -> None:
    with transaction.atomic():
        write()
        raise Abandon


def test_after_a_rollback_nothing_is_sent(recorded):
    with pytest.raises(Abandon):
        abandoned(lambda: services.record_actum(OWNER, scenario.booking_reply()))
    assert recorded.calls == []
    with pytest.raises(ChronicumNotFound):
        services.get_acta(OWNER, CHRONICUM)


def test_a_savepoint_rolled_back_inside_a_committed_block_sends_nothing_for_its_acta(recorded):
    with transaction.atomic():
        kept = services.record_actum(OWNER, scenario.acta()[0])
        try:
            with transaction.atomic():
                services.record_actum(OWNER, scenario.booking_reply())
                raise LookupError("the booking agent gave up")
        except LookupError:
            pass
    assert recorded.acta == [kept]
    assert services.get_acta(OWNER, CHRONICUM) == [kept]


def test_a_failing_receiver_neither_undoes_nor_unacknowledges_the_write(failing, recorded, caplog):
    caplog.set_level(logging.ERROR, logger="chronica")
    reply = services.record_actum(OWNER, scenario.booking_reply())

    assert services.get_acta(OWNER, CHRONICUM) == [reply]
    assert failing.acta == [reply]
    assert recorded.acta == [reply]  # the receivers after it still ran
    [log] = [r for r in caplog.records if r.name == "chronica"]
    assert "actum_recorded" in log.getMessage()
    assert log.exc_info is not None
    assert log.exc_info[0] is RuntimeError


def test_a_failing_receiver_at_the_commit_of_the_apps_block(failing, recorded, caplog):
    caplog.set_level(logging.ERROR, logger="chronica")
    with transaction.atomic():
        reply = services.record_actum(OWNER, scenario.booking_reply())
    # The block exited normally: the commit stands and the app's code went on.
    assert services.get_acta(OWNER, CHRONICUM) == [reply]
    assert recorded.acta == [reply]
    assert any(r.name == "chronica" and r.exc_info for r in caplog.records)


def test_chronicum_deleted_after_the_delete_commits(deleted):
    services.record_acta(OWNER, scenario.acta())
    with transaction.atomic():
        services.delete_chronicum(OWNER, CHRONICUM)
        assert deleted.calls == []
    assert [(c["owner_id"], c["chronicum_id"]) for c in deleted.calls] == [(OWNER, CHRONICUM)]
    assert deleted.calls[0]["in_atomic"] is False


def test_a_delete_rolled_back_sends_nothing(deleted):
    stored = services.record_acta(OWNER, scenario.acta())
    with pytest.raises(Abandon):
        abandoned(lambda: services.delete_chronicum(OWNER, CHRONICUM))
    assert deleted.calls == []
    assert services.get_acta(OWNER, CHRONICUM) == stored


def test_a_failing_receiver_does_not_undo_a_delete(failing, caplog):
    caplog.set_level(logging.ERROR, logger="chronica")
    services.record_acta(OWNER, scenario.acta())
    services.delete_chronicum(OWNER, CHRONICUM)
    with pytest.raises(ChronicumNotFound):
        services.get_chronicum(OWNER, CHRONICUM)
    assert [c["chronicum_id"] for c in failing.calls if "chronicum_id" in c] == [CHRONICUM]
    assert any("chronicum_deleted" in r.getMessage() for r in caplog.records)


def test_nothing_for_someone_elses_chronicum(recorded):
    services.record_actum(OWNER, scenario.booking_reply())
    with pytest.raises(ChronicumNotFound):
        services.record_actum("rafa", scenario.booking_reply())
    assert len(recorded.calls) == 1


class TestAsyncTwins:
    @pytest.fixture(autouse=True)
    async def close_executor_connections(self):
        yield
        await sync_to_async(connections.close_all)()

    async def test_arecord_sends_once_and_never_for_a_replay(self, recorded):
        first = await services.arecord_actum(OWNER, scenario.acta()[0])
        reply = await services.arecord_actum(OWNER, scenario.booking_reply(), idempotency_key=KEY)
        again = await services.arecord_actum(OWNER, scenario.booking_reply(), idempotency_key=KEY)
        batch = await services.arecord_acta(OWNER, scenario.acta()[1:3])
        assert again == reply
        assert recorded.acta == [first, reply, *batch]
        assert {call["owner_id"] for call in recorded.calls} == {OWNER}

    async def test_a_failing_receiver_under_asyncio(self, failing, recorded, caplog):
        caplog.set_level(logging.ERROR, logger="chronica")
        await services.arecord_actum(OWNER, scenario.acta()[0])
        reply = await services.arecord_actum(OWNER, scenario.booking_reply())
        assert (await services.aget_acta(OWNER, CHRONICUM))[-1] == reply
        assert recorded.acta[-1] == reply
        assert any(r.name == "chronica" and r.exc_info for r in caplog.records)

    async def test_an_async_receiver_is_awaited(self):
        got: list[Actum] = []

        async def receiver(sender, *, owner_id, actum, **kwargs):
            got.append(actum)

        actum_recorded.connect(receiver, weak=False)
        try:
            first = await services.arecord_actum(OWNER, scenario.acta()[0])
            reply = await services.arecord_actum(OWNER, scenario.booking_reply())
        finally:
            actum_recorded.disconnect(receiver)
        assert got == [first, reply]
