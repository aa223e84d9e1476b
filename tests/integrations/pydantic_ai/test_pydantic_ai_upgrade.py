"""The move of PydanticAI's two tables from the ``chronica`` app into
``chronica.integrations.pydantic_ai``: a database migrated before it keeps every row."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from chronica.integrations.pydantic_ai import ChronicaConversationStore
from chronica.integrations.pydantic_ai.models import PydanticAIConversation, PydanticAIEntry

from .scenario import OWNER, ask, run, say

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE_THE_MOVE = [("chronica", "0008_window_function"), ("chronica_pydantic_ai", None)]


def migrate(targets: list[tuple[str, str | None]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return MigrationExecutor(connection)


def latest() -> list[tuple[str, str | None]]:
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def test_an_upgrade_from_before_the_move_keeps_every_row_and_every_conversation_loads():
    from pydantic_ai.conversation import Conversation

    store = ChronicaConversationStore()
    first = Conversation(conversation_id="dinner-friday", messages=[ask("A quiet table?")])
    run(store.save)(first, scope=OWNER)

    try:
        executor = migrate(BEFORE_THE_MOVE)
        # The database as chronica before the move left it: the tables are the chronica
        # app's, and a conversation written then (the same rows the store writes).
        old = executor.loader.project_state(BEFORE_THE_MOVE[0]).apps
        conversations = old.get_model("chronica", "PydanticAIConversation")
        entries = old.get_model("chronica", "PydanticAIEntry")
        assert conversations.objects.count() == 1
        assert entries.objects.count() == 1
        second = Conversation(conversation_id="lunch-saturday", messages=[ask("Lunch?")])
        record = conversations.objects.get().record
        (entry,) = entries.objects.all()
        # Written as that release wrote it, with the models of then (the code of now
        # reads and writes the columns of now).
        now = dt.datetime.now(dt.UTC)
        old.get_model("chronica", "Chronicum").objects.create(
            id="lunch-saturday", owner_id=OWNER, started_at=now, last_activity_at=now
        )
        actum = _actum("lunch-saturday", "Lunch?")
        old.get_model("chronica", "Actum").objects.create(
            id="lunch-actum",
            chronicum_id="lunch-saturday",
            kind=actum.kind.value,
            actor_kind=actum.actor_kind.value,
            actor=actum.actor,
            content=actum.content,
            data=actum.data,
            at=now,
        )
        conversations.objects.create(
            conversation_id="lunch-saturday",
            owner_id=OWNER,
            scope=OWNER,
            revision="r-lunch",
            updated_at=dt.datetime.now(dt.UTC),
            record={
                **record,
                "conversation_id": "lunch-saturday",
                "revision": "r-lunch",
                "head_id": "lunch-entry",
            },
        )
        entries.objects.create(
            conversation_id="lunch-saturday",
            entry_id="lunch-entry",
            parent_id=None,
            actum_id="lunch-actum",
        )
        assert entry.conversation_id == "dinner-friday"
        assert second.conversation_id == "lunch-saturday"
    finally:
        migrate(latest())

    assert PydanticAIConversation.objects.count() == 2
    assert PydanticAIEntry.objects.count() == 2
    dinner = run(store.load)("dinner-friday", scope=OWNER)
    lunch = run(store.load)("lunch-saturday", scope=OWNER)
    assert dinner is not None
    assert lunch is not None
    assert dinner.messages == first.messages
    assert [m.parts[0].content for m in lunch.messages] == ["Lunch?"]
    # And the store goes on writing where the old rows are.
    dinner.messages.append(say("concierge", "Rumah Teduh has one."))
    run(store.save)(dinner, scope=OWNER)
    assert PydanticAIEntry.objects.count() == 3


def _actum(chronicum_id: str, text: str):
    from chronica.integrations.pydantic_ai import actum_of

    return actum_of(ask(text), chronicum_id, OWNER)
