"""Issue 21: a ChronicaSession in an agent service, with the agent's own credential."""

from __future__ import annotations

import pytest

from chronica import NotPermitted, services
from chronica.integrations.openai_agents import ChronicaSession

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
async def close_executor_connections():
    from asgiref.sync import sync_to_async
    from django.db import connections

    yield
    # The session's queries ran on sync_to_async's executor thread: close its connection.
    await sync_to_async(connections.close_all)()


async def test_an_agent_session_writes_only_as_its_agent():
    from asgiref.sync import sync_to_async

    issued = await sync_to_async(services.issue_credential)("ardian", "booking")
    identity = await sync_to_async(services.authenticate_credential)(issued.secret)
    session = ChronicaSession("dinner-friday", identity=identity, default_agent="booking")
    assert session.owner_id == "ardian"
    await session.add_items([{"role": "assistant", "content": "Held: Rumah Teduh."}])
    with pytest.raises(NotPermitted):
        await session.add_items([{"role": "user", "content": "Yes, book it and pay."}])
    with pytest.raises(NotPermitted):
        await session.clear_session()
    acta = await services.aget_acta("ardian", "dinner-friday")
    assert [(a.actor, a.recorded_by) for a in acta] == [
        ("booking", f"credential:{issued.info.key_id}")
    ]
    assert len(await session.get_items()) == 1


async def test_an_agent_with_a_credential_runs_on_the_persons_turn_in_a_shared_session():
    """The person's message is the person's (recorded as the owner); the agent runs on
    the session with no input of its own, and what it writes is attested as its own,
    under its own name."""
    from agents import Agent, RunConfig, Runner
    from agents.testing import ScriptedModel, assistant_message
    from asgiref.sync import sync_to_async

    from chronica import Actum
    from chronica.services import OwnerIdentity

    issued = await sync_to_async(services.issue_credential)("ardian", "concierge")
    identity = await sync_to_async(services.authenticate_credential)(issued.secret)
    ask = "Find us a quiet table for four in Kemang on Friday at 7pm."
    await services.acting_as(OwnerIdentity("ardian")).arecord_actum(
        "ardian",
        Actum(
            chronicum_id="dinner-friday",
            kind="message",
            actor_kind="human",
            actor="ardian",
            content=ask,
        ),
    )
    concierge = Agent[None](
        name="concierge", model=ScriptedModel([[assistant_message("Searching Kemang.")]])
    )
    session = ChronicaSession("dinner-friday", identity=identity)
    result = await Runner.run(
        concierge, [], session=session, run_config=RunConfig(tracing_disabled=True)
    )

    assert result.final_output == "Searching Kemang."
    acta = await services.aget_acta("ardian", "dinner-friday")
    assert [(a.actor, a.content, a.recorded_by) for a in acta] == [
        ("ardian", ask, "owner"),
        ("concierge", "Searching Kemang.", f"credential:{issued.info.key_id}"),
    ]
