"""ChronicaSession: the OpenAI Agents SDK's memory on chronica, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner
from agents.memory import Session, SessionSettings
from agents.testing import ScriptedModel, assistant_message
from asgiref.sync import sync_to_async
from django.db import connections

from chronica import Actum, ChronicumNotFound, InvalidActum, services
from chronica.integrations.openai_agents import CONTENT_LIMIT, ChronicaSession
from chronica.services import Chronicarius
from example_project.dinner import openai_flow

from .items import ITEMS

pytestmark = pytest.mark.django_db(transaction=True)

CHRONICUM = "dinner-friday"


@pytest.fixture(autouse=True)
async def close_executor_connections():
    yield
    # The session's queries ran on sync_to_async's executor thread: close that thread's
    # connection, or the test database cannot be dropped at the end.
    await sync_to_async(connections.close_all)()


def session(owner_id: str = "ardian", **options: Any) -> ChronicaSession:
    return ChronicaSession(CHRONICUM, owner_id=owner_id, **options)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def turn(n: int) -> list[Any]:
    """A five-item turn: the question, a thought, a tool call, its output, the answer."""
    return [item for item, *_ in ITEMS[:1] + ITEMS[4:5] + ITEMS[6:9]] + [user(f"turn {n}")]


async def test_it_is_an_agents_sdk_session():
    assert isinstance(session(), Session)


async def test_every_item_type_comes_back_exactly_as_it_was_added():
    items = [item for item, *_ in ITEMS]
    memory = session()
    await memory.add_items(items)
    assert await memory.get_items() == items
    assert await ChronicaSession(CHRONICUM, owner_id="ardian").get_items() == items


async def test_each_item_is_one_actum_readable_by_any_agent():
    await session(default_agent="agent").add_items([item for item, *_ in ITEMS])
    acta = await services.aget_acta("ardian", CHRONICUM)
    assert len(acta) == len(ITEMS)
    for actum, (item, kind, actor_kind, actor, call_id, content) in zip(acta, ITEMS, strict=True):
        assert (actum.kind, actum.actor_kind, actum.actor) == (kind, actor_kind, actor), item
        assert (actum.call_id, actum.content) == (call_id, content), item
        assert actum.data == item


async def test_a_tool_output_never_comes_without_its_call_in_a_whole_tool_calls_window():
    await session().add_items(turn(1))
    window = await services.aget_acta("ardian", CHRONICUM, last_n=3, whole_tool_calls=True)
    assert [a.kind for a in window] == ["message", "message"]


async def test_limit_counts_items_as_chronica_counts_acta():
    memory = session()
    items = [user(f"message {n}") for n in range(7)]
    await memory.add_items(items)
    assert await memory.get_items(limit=3) == items[-3:]
    assert await memory.get_items(limit=0) == []
    assert await memory.get_items(limit=100) == items
    assert await memory.get_items(limit=-1) == items  # as the SDK's SQLiteSession: no limit
    assert await memory.get_items() == items
    assert [a.content for a in await services.aget_acta("ardian", CHRONICUM, last_n=3)] == [
        "message 4",
        "message 5",
        "message 6",
    ]


async def test_session_settings_limit_is_the_default_limit():
    items = [user(f"message {n}") for n in range(4)]
    await session().add_items(items)
    assert await session(session_settings=SessionSettings(limit=2)).get_items() == items[-2:]
    assert await session(session_settings={"limit": 0}).get_items() == []
    assert await session(session_settings={"limit": 2}).get_items(limit=3) == items[-3:]


async def test_a_turn_lands_whole_or_not_at_all():
    memory = session()
    await memory.add_items(turn(1))
    broken = turn(2)
    broken[2] = {**broken[2], "arguments": '{"area":"Kemang\x00"}'}
    with pytest.raises(InvalidActum):
        await memory.add_items(broken)
    assert await memory.get_items() == turn(1)


async def test_an_item_that_is_not_json_is_refused_before_anything_is_written():
    with pytest.raises(InvalidActum, match="not JSON"):
        await session().add_items([user("hello"), {"role": "user", "content": object()}])
    with pytest.raises(InvalidActum, match="JSON object"):
        await session().add_items(["hello"])  # type: ignore[list-item]
    assert await session().get_items() == []


async def test_pop_item_removes_the_newest_and_clear_session_the_chronicum():
    memory = session()
    items = turn(1)
    await memory.add_items(items)
    assert await memory.pop_item() == items[-1]
    assert await memory.get_items() == items[:-1]
    await memory.clear_session()
    assert await memory.get_items() == []
    assert await memory.pop_item() is None
    with pytest.raises(ChronicumNotFound):
        await services.aget_chronicum("ardian", CHRONICUM)
    await memory.clear_session()  # nothing left to clear is no error


async def test_someone_elses_chronicum_reads_as_empty_and_refuses_writes():
    await session("ardian").add_items(turn(1))
    rafa = session("rafa")
    assert await rafa.get_items() == []
    assert await rafa.pop_item() is None
    await rafa.clear_session()
    with pytest.raises(ChronicumNotFound):
        await rafa.add_items([user("Cancel that table.")])
    assert await session("ardian").get_items() == turn(1)


async def test_items_changed_after_they_were_added_stay_as_added():
    item = user("Rumah Teduh.")
    await session().add_items([item])
    item["content"] = "Kayu Manis."
    assert await session().get_items() == [user("Rumah Teduh.")]


async def test_acta_written_by_others_read_back_as_plain_messages():
    await session().add_items([user("Find us a quiet table.")])
    await services.arecord_actum(
        "ardian",
        Actum(
            chronicum_id=CHRONICUM,
            kind="message",
            actor_kind="agent",
            actor="search",
            content="Rumah Teduh has a quiet table.",
        ),
    )
    assert await session().get_items() == [
        user("Find us a quiet table."),
        {"role": "assistant", "content": "Rumah Teduh has a quiet table."},
    ]


async def test_actors_user_and_default_agent_are_configurable():
    memory = session(user_actor="ardian@example.com", default_agent="concierge")
    await memory.add_items([user("Rumah Teduh."), {"role": "assistant", "content": "Booking."}])
    acta = await services.aget_acta("ardian", CHRONICUM)
    assert [(a.actor_kind, a.actor) for a in acta] == [
        ("human", "ardian@example.com"),
        ("agent", "concierge"),
    ]


async def test_a_long_output_is_cut_in_content_and_whole_in_data():
    output = {"type": "function_call_output", "call_id": "call_menu", "output": "x" * 50_000}
    await session().add_items([output])
    (actum,) = await services.aget_acta("ardian", CHRONICUM)
    assert len(actum.content) == CONTENT_LIMIT
    assert actum.content.endswith("…")
    assert actum.data == output


# A newline (C0) and NEL (C1): both control characters, which rule 2 refuses in a call ID.
@pytest.mark.parametrize("call_id", ["call\nsearch", "call\x85search"])
async def test_a_call_id_no_store_can_index_links_nothing_but_stays_in_the_item(call_id):
    call = {"type": "function_call", "call_id": call_id, "name": "search", "arguments": ""}
    await session().add_items([call])
    (actum,) = await services.aget_acta("ardian", CHRONICUM)
    assert actum.call_id == ""
    assert actum.data == call


async def test_a_cancelled_add_items_returns_only_once_the_turn_has_landed(monkeypatch):
    entered, release = threading.Event(), threading.Event()
    arecord = Chronicarius.arecord_acta

    async def held_arecord(self, *args, **kwargs):
        entered.set()
        assert await asyncio.to_thread(release.wait, 30)
        return await arecord(self, *args, **kwargs)

    monkeypatch.setattr(Chronicarius, "arecord_acta", held_arecord)
    adding = asyncio.create_task(session().add_items(turn(1)))
    assert await asyncio.to_thread(entered.wait, 30)
    adding.cancel()
    await asyncio.sleep(0)
    assert not adding.done()  # the write is still in flight: the caller waits for it
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await adding
    monkeypatch.setattr(Chronicarius, "arecord_acta", arecord)
    assert await session().get_items() == turn(1)


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])
async def test_a_handoff_run_lands_in_one_chronicum_under_the_agent_of_each_item(streamed):
    agent = openai_flow.dinner_agents()
    memory = session()
    config = RunConfig(tracing_disabled=True)
    if streamed:
        result = Runner.run_streamed(agent, openai_flow.ASK, session=memory, run_config=config)
        async for _event in result.stream_events():
            pass
    else:
        await Runner.run(agent, openai_flow.ASK, session=memory, run_config=config)
    acta = await services.aget_acta("ardian", CHRONICUM)
    assert [(a.kind, a.actor, a.call_id) for a in acta] == [
        ("message", "ardian", ""),
        ("message", "concierge", ""),
        ("tool_request", "concierge", "to-booking"),
        ("tool_response", "concierge", "to-booking"),
        ("tool_request", "booking", "hold-rumah-teduh"),
        ("tool_response", "booking", "hold-rumah-teduh"),
        ("message", "booking", ""),
    ]
    assert "RT-4821" in acta[-1].content
    assert await memory.get_items() == [a.data for a in acta]


async def test_the_next_run_reads_the_history_back():
    model = ScriptedModel([[assistant_message("Friday at 7pm.")], [assistant_message("Four.")]])
    concierge = Agent(name="concierge", model=model)
    memory = session()
    config = RunConfig(tracing_disabled=True)
    await Runner.run(concierge, "When is dinner?", session=memory, run_config=config)
    await Runner.run(concierge, "For how many?", session=memory, run_config=config)
    first_question, first_answer, second_question = model.calls[1].input
    assert first_question["content"] == "When is dinner?"
    assert first_answer["content"][0]["text"] == "Friday at 7pm."
    assert second_question["content"] == "For how many?"


async def test_the_example_flow_records_the_booking():
    acta = await openai_flow.abook_with_agents("ardian", "dinner-friday-agents")
    assert [a.actor for a in acta] == ["ardian", *["concierge"] * 3, *["booking"] * 3]
    again = await openai_flow.abook_with_agents("ardian", "dinner-friday-agents")
    assert len(again) == len(acta)  # the second run adds its own turn to the same history


async def test_a_limit_that_is_not_an_int_is_a_clear_error():
    from chronica import InvalidQuery

    memory = session()
    await memory.add_items([user("Find us a quiet table.")])
    for limit in ("3", 2.0, True):
        with pytest.raises(InvalidQuery, match="limit must be an int or None"):
            await memory.get_items(limit)  # type: ignore[arg-type]
    assert len(await memory.get_items()) == 1


async def test_the_window_reads_only_the_part_it_names():
    memory = session(window={"kinds": ["message"], "actor_kinds": ["human"]})
    items = [item for item, *_ in ITEMS[:1] + ITEMS[4:5] + ITEMS[6:9]]
    await memory.add_items([*items, user("Rumah Teduh.")])

    assert await memory.get_items() == [items[0], user("Rumah Teduh.")]
    assert await memory.get_items(1) == [user("Rumah Teduh.")]
    with pytest.raises(TypeError, match="window takes"):
        session(window={"last_n": 3})


async def test_other_frameworks_acta_read_back_as_plain_messages():
    """In a chronicum the SDK shares, an ADK event or a PydanticAI message is not an SDK
    item: it reads back as a message of its text, under the role of its actor kind."""
    adk_event = {"author": "booking", "id": "e1", "invocation_id": "i1", "actions": {}}
    pydantic_message = {"kind": "response", "parts": [{"part_kind": "text", "content": "x"}]}
    await services.arecord_acta(
        "ardian",
        [
            Actum(
                chronicum_id=CHRONICUM,
                kind="message",
                actor_kind="agent",
                actor="booking",
                content="Held: Rumah Teduh.",
                data=adk_event,
            ),
            Actum(
                chronicum_id=CHRONICUM,
                kind="message",
                actor_kind="human",
                actor="ardian",
                content="Thank you.",
                data=pydantic_message,
            ),
        ],
    )
    assert await session().get_items() == [
        {"role": "assistant", "content": "Held: Rumah Teduh."},
        {"role": "user", "content": "Thank you."},
    ]
