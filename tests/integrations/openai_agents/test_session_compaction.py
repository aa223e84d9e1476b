"""ChronicaSession under the SDK's compaction: the compacted history is one write of
chronica's, and nothing any agent wrote is deleted, on SQLite and PostgreSQL."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any
from unittest.mock import AsyncMock, MagicMock

import pytest
from agents import Agent, RunConfig, Runner
from agents.memory import OpenAIResponsesCompactionSession
from agents.testing import ScriptedModel, assistant_message
from asgiref.sync import sync_to_async
from django.db import connections

from chronica import ActorKind, Actum, ActumKind, ChronicumNotFound, services
from chronica.integrations.openai_agents import ChronicaSession

pytestmark = pytest.mark.django_db(transaction=True)

CHRONICUM = "dinner-friday"
OWNER = "ardian"
SUMMARY = {"type": "compaction", "id": "cmp", "encrypted_content": "synthetic summary"}


@pytest.fixture(autouse=True)
async def close_executor_connections():
    yield
    await sync_to_async(connections.close_all)()


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def booking(text: str) -> Actum:
    """What another agent (booking, through the API) writes into the same chronicum."""
    return Actum(
        chronicum_id=CHRONICUM,
        kind=ActumKind.MESSAGE,
        actor_kind=ActorKind.AGENT,
        actor="booking",
        content=text,
    )


def compacting(session: ChronicaSession, output: list[Any]) -> OpenAIResponsesCompactionSession:
    client = MagicMock()
    client.responses.compact = AsyncMock(return_value=SimpleNamespace(output=output))
    return OpenAIResponsesCompactionSession(
        CHRONICUM,
        session,
        client=client,
        compaction_mode="input",
        should_trigger_compaction=lambda _: True,
    )


async def every_actum() -> list[Actum]:
    return await services.aget_acta(OWNER, CHRONICUM)


async def test_a_manual_compaction_is_one_compaction_and_nothing_is_deleted():
    session = ChronicaSession(CHRONICUM, owner_id=OWNER)
    await session.add_items([user(f"turn {i}") for i in range(12)])
    before = await every_actum()
    await compacting(session, [SUMMARY]).run_compaction({"force": True})
    assert await session.get_items() == [SUMMARY]
    after = await every_actum()
    assert after[: len(before)] == before
    (compaction,) = after[len(before) :]
    assert compaction.compacts == before[-1].id
    assert compaction.data == SUMMARY


async def test_automatic_compaction_keeps_what_the_snapshot_did_not_cover():
    session = ChronicaSession(CHRONICUM, owner_id=OWNER)
    history = [user(str(i)) for i in range(4)]
    await session.add_items(history)
    model = ScriptedModel(steps=[[assistant_message("done")]])
    compaction = compacting(session, [SUMMARY])
    # The model saw one stored item ("3"): the SDK compacts its exchange only, from it on.
    config = RunConfig(session_settings={"limit": 1})
    await Runner.run(
        Agent(name="concierge", model=model), "continue", session=compaction, run_config=config
    )
    assert await session.get_items() == [*history[:3], SUMMARY]
    # The long history is all there for every other reader.
    every = await every_actum()
    assert [a.data for a in every[:4]] == history
    assert every[5].data == assistant_message("done").model_dump(exclude_unset=True)
    assert sum(1 for a in every if a.compacts) == 4  # the copies of three, the summary


async def test_clear_session_deletes_a_chronicum_only_this_session_wrote():
    session = ChronicaSession(CHRONICUM, owner_id=OWNER)
    await session.add_items([user("hello")])
    await session.clear_session()
    with pytest.raises(ChronicumNotFound):
        await services.aget_chronicum(OWNER, CHRONICUM)


async def test_clear_session_hides_history_others_wrote_into():
    session = ChronicaSession(CHRONICUM, owner_id=OWNER)
    await session.add_items([user("A quiet table for four?")])
    held = await services.arecord_actum(OWNER, booking("Rumah Teduh is held, RT-4821."))
    await session.clear_session()
    assert await session.get_items() == []
    assert await session.pop_item() is None
    every = await every_actum()
    assert held in every
    assert len(every) == 3  # the item, booking's actum, the marker of the clearing
    await session.clear_session()
    assert len(await every_actum()) == 3  # cleared once is cleared
    later = await services.arecord_actum(OWNER, booking("Confirmed."))
    assert await session.get_items() == [{"role": "assistant", "content": later.content}]
    await session.add_items([user("Thanks!")])
    assert (await session.get_items())[-1] == user("Thanks!")


async def test_atomic_replace_with_nothing_is_a_compaction_of_no_items():
    session = ChronicaSession(CHRONICUM, owner_id=OWNER)
    await session.add_items([user(str(i)) for i in range(3)])
    assert await session._atomic_replace_items([]) is True
    assert await session.get_items() == []
    assert len(await every_actum()) == 4
