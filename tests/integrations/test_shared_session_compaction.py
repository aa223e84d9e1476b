"""The session issue 36 exists for: ardian, an OpenAI Agents SDK concierge that compacts
its memory, and an ADK booking agent share dinner-friday. The concierge compacts three
times; every actum ever acknowledged is still there, the booking agent's window only
grows, the concierge reads what the SDK expects, and a compaction killed (kill -9) in
the middle leaves the old view or the new one, never a hole. SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest.mock import AsyncMock, MagicMock

import pytest
from agents import Agent, Runner
from agents.memory import OpenAIResponsesCompactionSession
from agents.testing import ScriptedModel, assistant_message
from asgiref.sync import async_to_sync, sync_to_async
from django.db import connection, connections

from chronica import Actum, services
from chronica.integrations.google_adk import ChronicaSessionService
from chronica.integrations.openai_agents import ChronicaSession

from .google_adk.scenario import reply

pytestmark = pytest.mark.django_db(transaction=True)

CHRONICUM = "dinner-friday"
OWNER = "ardian"
APP = "dinner"


def summary(n: int) -> dict[str, Any]:
    return {"type": "compaction", "id": f"cmp-{n}", "encrypted_content": f"summary {n}"}


def persons(text: str) -> Actum:
    return services.record_actum(
        OWNER,
        Actum(
            chronicum_id=CHRONICUM, kind="message", actor_kind="human", actor=OWNER, content=text
        ),
    )


def concierge(n: int) -> tuple[ChronicaSession, OpenAIResponsesCompactionSession]:
    session = ChronicaSession(CHRONICUM, owner_id=OWNER, default_agent="concierge")
    client = MagicMock()
    client.responses.compact = AsyncMock(return_value=SimpleNamespace(output=[summary(n)]))
    return session, OpenAIResponsesCompactionSession(
        CHRONICUM, session, client=client, should_trigger_compaction=lambda _: False
    )


async def concierge_turn(n: int, text: str) -> list[Any]:
    """One run of the concierge, then a compaction of its whole history; what the SDK
    reads back after it."""
    session, compacting = concierge(n)
    model = ScriptedModel(steps=[[assistant_message(f"concierge: {text}")]])
    await Runner.run(Agent(name="concierge", model=model), text, session=compacting)
    await compacting.run_compaction({"force": True})
    items = await session.get_items()
    await sync_to_async(connections.close_all)()
    return items


def test_three_compactions_lose_nothing_and_change_no_one_elses_window():
    booking = ChronicaSessionService(session_ids="plain")
    adk = async_to_sync(booking.create_session)(app_name=APP, user_id=OWNER, session_id=CHRONICUM)
    acknowledged: list[Actum] = [persons("A quiet table for four in Kemang, Friday 7pm?")]
    async_to_sync(booking.append_event)(adk, reply("Rumah Teduh has a table.", author="booking"))

    def adk_window() -> list[tuple[str, str]]:
        got = async_to_sync(booking.get_session)(app_name=APP, user_id=OWNER, session_id=CHRONICUM)
        assert got is not None
        return [(e.author, e.content.parts[0].text) for e in got.events]

    for n in range(1, 4):
        before_adk = adk_window()
        items = asyncio.run(concierge_turn(n, f"question {n}"))
        # The SDK reads its compacted history: the summary alone.
        assert items == [summary(n)]
        # Every actum ever acknowledged is still there, unchanged, in order.
        every = services.get_acta(OWNER, CHRONICUM)
        assert [a for a in every if a.id in {b.id for b in acknowledged}] == acknowledged
        acknowledged = every
        # The booking agent's window: what it read before, and the concierge's new turn
        # (its question and answer), never its compaction.
        after_adk = adk_window()
        assert after_adk[: len(before_adk)] == before_adk
        assert after_adk[len(before_adk) :] == [
            ("user", f"question {n}"),
            ("concierge", f"concierge: question {n}"),
        ]
        # The others write on; the concierge then reads its summary and what came after.
        acknowledged.append(persons(f"And a cake? ({n})"))
        async_to_sync(booking.append_event)(adk, reply(f"Cake ordered ({n}).", author="booking"))
        session = ChronicaSession(CHRONICUM, owner_id=OWNER)
        assert async_to_sync(session.get_items)() == [
            summary(n),
            {"role": "user", "content": f"And a cake? ({n})"},
            {"role": "assistant", "content": f"Cake ordered ({n})."},
        ]
    assert sum(1 for a in services.get_acta(OWNER, CHRONICUM) if a.compacts) == 3


# -- kill -9 in the middle of a compaction -------------------------------------------

# The concierge's compaction, in a process of its own; it stops inside the compacting
# transaction (the chronicum locked, the batch being inserted) and says so.
COMPACTOR = """
import asyncio, sys, time
from types import SimpleNamespace
from unittest.mock import AsyncMock, MagicMock
import django
django.setup()
from django.db.backends.signals import connection_created
from agents.memory import OpenAIResponsesCompactionSession
from chronica.integrations.openai_agents import ChronicaSession

def pause(execute, sql, params, many, context):
    if "compacts" in sql and "INSERT" in sql:
        result = execute(sql, params, many, context)
        print("inside", flush=True)
        time.sleep(60)
        return result
    return execute(sql, params, many, context)

session = ChronicaSession(sys.argv[1], owner_id=sys.argv[2])
client = MagicMock()
client.responses.compact = AsyncMock(return_value=SimpleNamespace(
    output=[{"type": "compaction", "id": "cmp-killed", "encrypted_content": "x" * 1000}] * 50))
compacting = OpenAIResponsesCompactionSession(sys.argv[1], session, client=client)
# On every connection: the session's calls run on a worker thread of their own.
connection_created.connect(
    lambda sender, connection, **kw: connection.execute_wrappers.append(pause), weak=False
)
asyncio.run(compacting.run_compaction({"force": True}))
print("done", flush=True)
"""


def child_env() -> dict[str, str]:
    root = str(Path(__file__).resolve().parents[2])
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
    }
    if connection.vendor == "postgresql":
        from ..stores.test_reliability_processes import worker_env

        return {**env, **worker_env()}
    env["CHRONICA_TEST_DB"] = "sqlite"
    env["CHRONICA_TEST_SQLITE"] = connection.settings_dict["NAME"]
    return env


@pytest.mark.slow
def test_a_compaction_killed_midway_leaves_the_old_view_and_a_finished_one_the_new():
    session = ChronicaSession(CHRONICUM, owner_id=OWNER)
    history = [{"role": "user", "content": f"turn {i}"} for i in range(20)]
    async_to_sync(session.add_items)(history)
    persons("And a cake?")
    old_view = async_to_sync(session.get_items)()
    every = services.get_acta(OWNER, CHRONICUM)
    connections.close_all()

    child = subprocess.Popen(
        [sys.executable, "-c", COMPACTOR, CHRONICUM, OWNER],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    try:
        line = child.stdout.readline()
        assert line == "inside\n", f"{line}{child.stderr.read()}"
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL
    # The old view, whole: no actum of the killed compaction, none lost.
    assert async_to_sync(session.get_items)() == old_view
    assert services.get_acta(OWNER, CHRONICUM) == every

    # The same compaction, not killed: the new view, at once and whole.
    finished = subprocess.run(
        [sys.executable, "-c", COMPACTOR.replace("time.sleep(60)", "pass"), CHRONICUM, OWNER],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=120,
    )
    assert finished.returncode == 0, finished.stderr
    new_view = async_to_sync(session.get_items)()
    assert len(new_view) == 50
    assert {item["id"] for item in new_view} == {"cmp-killed"}
    assert services.get_acta(OWNER, CHRONICUM)[: len(every)] == every
