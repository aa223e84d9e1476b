"""Issue 21: a ChronicaSession in an agent service, with the agent's own credential."""

from __future__ import annotations

import pytest

from chronica import NotPermitted, services
from chronica.integrations.openai_agents import ChronicaSession

pytestmark = pytest.mark.django_db(transaction=True)


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
