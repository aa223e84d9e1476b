"""A keyed replay answers only its own owner's acta (rule 4 on the retry path).

ardian's booking agent writes with ``Idempotency-Key: booking-reply-1``, and retries.
The retry finds the key used and answers the batch the key stored. If, between the
statement that found the key used and the read of that batch, ardian's chronicum is
deleted and rafa creates the same ID and writes with the same key, the replay must not
answer rafa's acta: the retry is then ``ChronicumNotFound`` (the ID is rafa's), and a
replay whose batch is gone lands again, never ``[]``.

These tests make that interleaving certain: a Django ``execute_wrapper`` on the retry's
connection runs the other side of the race before every statement of the retry but its
first. Where the retry holds the chronicum's lock between its statements (SQLite's
write lock, the memory store's lock), the other side waits, and the retry answers from
before it; either way nothing of rafa's comes back.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db import connection, connections

from chronica import Actum, ChronicumNotFound
from chronica.services import Chronicarius
from chronica.stores.db import DjangoStore
from chronica.stores.memory import InMemoryStore

X = "dinner-friday"
KEY = "booking-reply-1"


def reply(content: str, actor: str = "booking") -> Actum:
    return Actum(chronicum_id=X, kind="message", actor_kind="agent", actor=actor, content=content)


def ardians(count: int) -> list[Actum]:
    return [reply(f"A table for four at Rumah Teduh, part {n}.") for n in range(count)]


RAFAS_SECRET = "RAFA PRIVATE: my card ends 4242"


def rafa_takes_the_id(c: Chronicarius) -> None:
    """ardian's X is deleted; rafa creates X and writes with ardian's key."""
    c.delete_chronicum("ardian", X)
    c.create_chronicum("rafa", X)
    c.record_acta("rafa", [reply(RAFAS_SECRET, "rafa-agent")] * 2, idempotency_key=KEY)


def ardian_deletes(c: Chronicarius) -> None:
    """The batch the key stored goes with ardian's delete."""
    c.delete_chronicum("ardian", X)


def ardian_pops_the_batch(c: Chronicarius) -> None:
    """The batch the key stored is popped, actum by actum."""
    while c.pop_actum("ardian", X) is not None:
        pass


@contextlib.contextmanager
def between_the_statements(attack: Callable[[], None]) -> Iterator[list[int]]:
    """Run ``attack`` in another thread (its own connection) before the second statement
    this thread sends, and wait up to a second for it: long enough for it to finish
    unless the retry holds a lock it needs. Yields the count of statements seen."""
    seen = [0]
    threads: list[threading.Thread] = []

    def attack_then_close() -> None:
        try:
            attack()
        finally:
            connections.close_all()

    def wrapper(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        seen[0] += 1
        if seen[0] == 2:
            thread = threading.Thread(target=attack_then_close)
            thread.start()
            thread.join(1)
            threads.append(thread)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(wrapper):
        yield seen
    for thread in threads:
        thread.join(30)
        assert not thread.is_alive(), "the other side of the race never finished"


ATTACKS = {
    "rafa takes the ID": rafa_takes_the_id,
    "the chronicum is deleted": ardian_deletes,
    "the batch is popped": ardian_pops_the_batch,
}
SIZES = {"one actum": 1, "a batch": 3}


def retry(c: Chronicarius, size: int) -> list[Actum]:
    if size == 1:
        return [c.record_actum("ardian", ardians(1)[0], idempotency_key=KEY)]
    return c.record_acta("ardian", ardians(size), idempotency_key=KEY)


def check_the_answer(c: Chronicarius, attack: str, answer: list[Actum] | BaseException) -> None:
    """Whatever the interleaving: nothing of rafa's in ardian's answer; rafa's own acta
    untouched; and a retry told it landed is stored in ardian's X."""
    if isinstance(answer, BaseException):
        # Only where X became rafa's may the retry be refused.
        assert isinstance(answer, ChronicumNotFound), repr(answer)
        assert attack == "rafa takes the ID"
        assert c.get_chronicum("rafa", X).owner_id == "rafa"
        return
    assert answer, "a write answered no acta"
    assert all(a.actor == "booking" for a in answer), answer
    assert all(RAFAS_SECRET not in a.content for a in answer), answer
    mine = c.get_acta("ardian", X)
    assert [a.id for a in answer] == [a.id for a in mine][-len(answer) :], (answer, mine)


@pytest.fixture(
    params=["memory", pytest.param("django", marks=pytest.mark.django_db(transaction=True))]
)
def store(request: pytest.FixtureRequest) -> Any:
    return InMemoryStore() if request.param == "memory" else DjangoStore()


@pytest.mark.parametrize("size", list(SIZES.values()), ids=list(SIZES))
@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_replay_never_answers_another_owners_acta(store, attack, size):
    c = Chronicarius(store)
    first = retry(c, size)
    with between_the_statements(lambda: ATTACKS[attack](c)) as seen:
        try:
            answer: list[Actum] | BaseException = retry(c, size)
        except Exception as exc:
            answer = exc
    check_the_answer(c, attack, answer)
    if not isinstance(answer, BaseException) and attack == "rafa takes the ID":
        # The retry held X's lock: it answered from before rafa came, as a replay.
        assert [a.id for a in answer] == [a.id for a in first]
    if isinstance(store, DjangoStore):
        assert seen[0] >= 2, "the retry sent one statement: the race was never run"
    if attack == "rafa takes the ID" and isinstance(answer, BaseException):
        rafas = c.get_acta("rafa", X)
        assert [a.content for a in rafas] == [RAFAS_SECRET] * 2


@pytest.mark.parametrize("size", list(SIZES.values()), ids=list(SIZES))
@pytest.mark.parametrize("attack", list(ATTACKS))
def test_an_asyncio_replay_never_answers_another_owners_acta(store, attack, size):
    c = Chronicarius(store)
    retry(c, size)
    seen: list[list[int]] = []

    async def aretry() -> list[Actum] | BaseException:
        # The wrapper goes on the connection of the thread where the retry's
        # statements run: the a* call's, when it runs in asgiref's thread.
        stack = contextlib.ExitStack()
        seen.append(
            await sync_to_async(stack.enter_context)(
                between_the_statements(lambda: ATTACKS[attack](c))
            )
        )
        try:
            if size == 1:
                return [await c.arecord_actum("ardian", ardians(1)[0], idempotency_key=KEY)]
            return await c.arecord_acta("ardian", ardians(size), idempotency_key=KEY)
        except Exception as exc:
            return exc
        finally:
            await sync_to_async(stack.close)()
            await sync_to_async(connections.close_all)()

    check_the_answer(c, attack, asyncio.run(aretry()))
    if isinstance(store, DjangoStore):
        assert seen[0][0] >= 2, "the retry sent one statement: the race was never run"
