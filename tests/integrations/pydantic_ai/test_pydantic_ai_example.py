"""The example: PydanticAI agents on TestModel whose conversation lives in chronica."""

from __future__ import annotations

import pytest
from django.urls import reverse

from chronica import ActorKind, ActumKind, services
from example_project.dinner import pydantic_flow
from example_project.dinner.scenario import BOOKING_REPLY

from .scenario import OWNER, run

pytestmark = pytest.mark.django_db


def test_the_agents_conversation_is_the_owners_chronicum():
    lines = pydantic_flow.pydantic_dinner(OWNER)

    acta = services.get_acta(OWNER, pydantic_flow.CONVERSATION)
    assert [(a.actor_kind, a.actor, a.kind) for a in acta] == [
        (ActorKind.HUMAN, OWNER, ActumKind.MESSAGE),
        (ActorKind.AGENT, "concierge", ActumKind.TOOL_REQUEST),
        (ActorKind.SYSTEM, "search", ActumKind.TOOL_RESPONSE),
        (ActorKind.AGENT, "concierge", ActumKind.MESSAGE),
        (ActorKind.HUMAN, OWNER, ActumKind.MESSAGE),
        (ActorKind.AGENT, "booking", ActumKind.MESSAGE),
    ]
    assert acta[1].call_id == acta[2].call_id != ""
    assert acta[-1].content == BOOKING_REPLY
    assert lines[0].endswith(f"chronicum {pydantic_flow.CONVERSATION}: 6 messages, 6 acta")
    loaded = run(pydantic_flow.store.load)(pydantic_flow.CONVERSATION, scope=OWNER)
    assert [m.kind for m in loaded.messages] == ["request", "response"] * 3


def test_each_run_starts_its_own_conversation():
    pydantic_flow.pydantic_dinner(OWNER)
    pydantic_flow.pydantic_dinner(OWNER)

    assert len(services.get_acta(OWNER, f"{pydantic_flow.CONVERSATION}-2")) == 6


def test_the_conversation_shows_in_the_admin(admin_client):
    pydantic_flow.pydantic_dinner(OWNER)

    page = admin_client.get(
        reverse("admin:chronica_chronicum_change", args=[pydantic_flow.CONVERSATION])
    )

    assert page.status_code == 200
    text = page.content.decode()
    for content in (pydantic_flow.REQUEST, pydantic_flow.ANSWER, BOOKING_REPLY):
        assert content in text
