"""Two writers from one revision, in real threads on the real database: one wins.

The revision check and the append of the new messages are one transaction, so the
loser's messages leave no actum and no entry behind.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import pytest
from asgiref.sync import async_to_sync
from django.db import connections
from pydantic_ai.conversation import Conversation
from pydantic_ai.conversation_store import (
    ConversationConflict,
    ConversationEntry,
    ConversationRecord,
)

from chronica import services
from chronica.integrations.pydantic_ai import ChronicaConversationStore
from chronica.integrations.pydantic_ai.models import PydanticAIEntry

from .scenario import CONVERSATION, OWNER, ask, say, seven

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ROUNDS = 8


def race(*saves):
    """Run each save in its own thread (its own connection), all released at once;
    return what each returned or raised."""
    barrier = threading.Barrier(len(saves))

    def writer(save):
        try:
            barrier.wait(timeout=30)
            return async_to_sync(save)()
        except Exception as exc:  # collected: the test says which outcome is wrong
            return exc
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=len(saves)) as pool:
        return list(pool.map(writer, saves))


def test_two_writers_of_one_revision_end_with_one_winner_and_one_conflict():
    store = ChronicaConversationStore()
    async_to_sync(store.save)(
        Conversation(messages=seven(), conversation_id=CONVERSATION), scope=OWNER
    )
    for n in range(ROUNDS):
        ardian = async_to_sync(store.load)(CONVERSATION)
        booking = async_to_sync(store.load)(CONVERSATION)
        ardian.messages.append(ask(f"Make it {n + 7}pm."))
        booking.messages += [say("booking", f"Held for {n + 7}pm."), ask("Thanks.")]

        outcomes = race(partial(store.save, ardian), partial(store.save, booking))

        conflicts = [o for o in outcomes if isinstance(o, ConversationConflict)]
        winners = [o for o in outcomes if isinstance(o, list)]
        assert len(conflicts) == 1, outcomes
        assert len(winners) == 1, outcomes
        winner = ardian if outcomes[0] is winners[0] else booking
        assert async_to_sync(store.load)(CONVERSATION).messages == winner.messages
    # Nothing of the losers is left: one actum and one entry per message of the winners.
    acta = services.get_acta(OWNER, CONVERSATION)
    whole = async_to_sync(store.load)(CONVERSATION)
    assert len(acta) == PydanticAIEntry.objects.count() == len(whole.messages)


def test_two_first_saves_of_one_conversation_end_with_one_winner():
    store = ChronicaConversationStore()
    for n in range(ROUNDS):
        conversation_id = f"{CONVERSATION}-{n}"
        ardian = Conversation(messages=[ask("A table for four?")], conversation_id=conversation_id)
        rafa = Conversation(messages=[ask("A table for two?")], conversation_id=conversation_id)

        outcomes = race(
            partial(store.save, ardian, scope=OWNER), partial(store.save, rafa, scope="rafa")
        )

        assert sorted(type(o).__name__ for o in outcomes) == ["ConversationConflict", "list"]
        winner, owner = (ardian, OWNER) if isinstance(outcomes[0], list) else (rafa, "rafa")
        assert async_to_sync(store.load)(conversation_id, scope=owner).messages == winner.messages
        assert len(services.get_acta(owner, conversation_id)) == 1


def test_two_writes_of_one_revision_past_the_first_check_end_with_one_winner():
    """Both writers read the record before either wrote: only the transaction's own
    check (the revision compared where the row is written) can stop the second."""
    store = ChronicaConversationStore()
    async_to_sync(store.save)(
        Conversation(messages=seven(), conversation_id=CONVERSATION), scope=OWNER
    )
    for n in range(ROUNDS):
        record = async_to_sync(store.read_record)(CONVERSATION)

        def write(text: str, record: ConversationRecord = record):
            entry = ConversationEntry(parent_id=record.head_id, message=ask(text))
            written = ConversationRecord(
                conversation_id=CONVERSATION, head_id=entry.id, scope=OWNER
            )
            return partial(
                store.write_record,
                written,
                new_entries=[entry],
                expected_revision=record.revision,
            )

        outcomes = race(write(f"ardian {n}"), write(f"booking {n}"))

        assert sorted(type(o).__name__ for o in outcomes) == ["ConversationConflict", "NoneType"]
    acta = services.get_acta(OWNER, CONVERSATION)
    assert len(acta) == PydanticAIEntry.objects.count() == 7 + ROUNDS
    assert len(async_to_sync(store.load)(CONVERSATION).messages) == 7 + ROUNDS


def test_a_save_on_sqlite_waits_past_the_busy_timeout(held_write_lock):
    store = ChronicaConversationStore()

    saved = async_to_sync(store.save)(
        Conversation(messages=seven(), conversation_id=CONVERSATION), scope=OWNER
    )

    assert held_write_lock.is_set()
    assert len(saved) == 7
    assert len(services.get_acta(OWNER, CONVERSATION)) == 7
