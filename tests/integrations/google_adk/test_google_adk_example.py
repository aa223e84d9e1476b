"""The example: ADK's Runner with a root agent, two sub-agents, a transfer and a function
tool on scripted models (no network), its session kept by ChronicaSessionService."""

from __future__ import annotations

import pytest
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from chronica import ActorKind, ActumKind, services
from chronica.integrations.google_adk import chronicum_id
from example_project.dinner import adk_flow
from example_project.dinner.scenario import BOOKING_REPLY

from .scenario import OWNER, STORES, run, using

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(params=STORES, autouse=True)
def store(request):
    with using(request.param):
        yield


def test_the_session_reloads_equal_and_is_the_owners_chronicum():
    session, events = run(adk_flow.dinner)(OWNER)

    reloaded = run(adk_flow.session_service.get_session)(
        app_name=adk_flow.APP, user_id=OWNER, session_id=session.id
    )
    assert [e for e in reloaded.events if e.author != "user"] == events
    assert reloaded.state == {"booking": BOOKING_REPLY}
    acta = services.get_acta(OWNER, chronicum_id(adk_flow.APP, OWNER, session.id))
    assert [(a.actor_kind, a.actor, a.kind) for a in acta] == [
        (ActorKind.HUMAN, OWNER, ActumKind.MESSAGE),
        (ActorKind.AGENT, "concierge", ActumKind.TOOL_REQUEST),  # transfer_to_agent
        (ActorKind.AGENT, "concierge", ActumKind.TOOL_RESPONSE),
        (ActorKind.AGENT, "finder", ActumKind.TOOL_REQUEST),  # search
        (ActorKind.AGENT, "finder", ActumKind.TOOL_RESPONSE),
        (ActorKind.AGENT, "finder", ActumKind.MESSAGE),
        (ActorKind.HUMAN, OWNER, ActumKind.MESSAGE),
        (ActorKind.AGENT, "finder", ActumKind.TOOL_REQUEST),  # transfer_to_agent
        (ActorKind.AGENT, "finder", ActumKind.TOOL_RESPONSE),
        (ActorKind.AGENT, "booking", ActumKind.MESSAGE),
    ]
    assert acta[3].call_id == acta[4].call_id != ""
    assert acta[-1].content == BOOKING_REPLY


def test_the_same_run_on_adks_in_memory_service_stores_the_same_events():
    session, _ = run(adk_flow.dinner)(OWNER)
    ours = run(adk_flow.session_service.get_session)(
        app_name=adk_flow.APP, user_id=OWNER, session_id=session.id
    )

    async def on_adk():
        service = InMemorySessionService()
        theirs = await service.create_session(app_name=adk_flow.APP, user_id=OWNER)
        runner = Runner(app_name=adk_flow.APP, agent=adk_flow.agents(), session_service=service)
        for text in (adk_flow.REQUEST, adk_flow.CHOICE):
            message = types.Content(role="user", parts=[types.Part(text=text)])
            async for _ in runner.run_async(
                user_id=OWNER, session_id=theirs.id, new_message=message
            ):
                pass
        return await service.get_session(app_name=adk_flow.APP, user_id=OWNER, session_id=theirs.id)

    theirs = run(on_adk)()

    def shape(session):
        return [
            (
                e.author,
                [
                    p.model_dump(
                        exclude_none=True,
                        exclude={"function_call": {"id"}, "function_response": {"id"}},
                    )
                    for p in e.content.parts
                ],
            )
            for e in session.events
        ]

    assert shape(ours) == shape(theirs)
    assert ours.state == theirs.state


def test_each_run_starts_its_own_session_and_the_demo_lines_say_so():
    adk_flow.adk_dinner(OWNER)
    lines = adk_flow.adk_dinner(OWNER)

    cid = chronicum_id(adk_flow.APP, OWNER, f"{adk_flow.SESSION}-2")
    assert lines[0].endswith(f"chronicum {cid}: 10 events, 10 acta")
    assert lines[-2].endswith("reloaded equal to what the runner appended: True")
