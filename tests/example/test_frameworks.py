"""make demo's shared session: the person, then an agent on each framework, in one
chronicum, each reading its own window, every actum attested."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync

from chronica import ActorKind, Actum, ActumKind, services
from chronica.services import OwnerIdentity
from example_project.dinner.scenario import (
    BIRTHDAY,
    BOOKING_CAKE,
    CAKE_ANSWER,
    CONCIERGE_BIRTHDAY,
    REMINDER,
)

pytestmark = pytest.mark.django_db(transaction=True)

OWNER = "ardian"
SESSION = "dinner-friday"


def test_every_framework_takes_its_turn_in_one_session_and_every_actum_is_attested():
    # Imported here, not at the top: the four frameworks take seconds to import, which
    # every leg that collects this file and does not run it would pay (scripts/ci.py).
    from example_project.dinner.frameworks import TURNS

    credentials = {
        turn.agent: services.issue_credential(OWNER, turn.agent, expires_in="1d") for turn in TURNS
    }
    services.acting_as(OwnerIdentity(OWNER)).record_actum(
        OWNER,
        Actum(
            chronicum_id=SESSION,
            kind="message",
            actor_kind="human",
            actor="ardian",
            content=BIRTHDAY,
        ),
    )

    for turn in TURNS:
        identity = services.authenticate_credential(credentials[turn.agent].secret)
        async_to_sync(turn.run)(OWNER, SESSION, identity)

    acta = services.get_acta(OWNER, SESSION)
    M, REQ, RES = ActumKind.MESSAGE, ActumKind.TOOL_REQUEST, ActumKind.TOOL_RESPONSE
    assert [(a.actor, a.kind) for a in acta] == [
        ("ardian", M),
        ("concierge", M),
        ("search", REQ),
        ("search", RES),
        ("search", M),
        ("reminder", M),
        ("booking", REQ),
        ("booking", RES),
        ("booking", M),
    ]
    assert [a.content for a in acta if a.kind == M] == [
        BIRTHDAY,
        CONCIERGE_BIRTHDAY,
        CAKE_ANSWER,
        REMINDER,
        BOOKING_CAKE,
    ]
    assert acta[0].recorded_by == "owner"
    for actum in acta[1:]:
        assert actum.actor_kind is ActorKind.AGENT
        assert actum.recorded_by == f"credential:{credentials[actum.actor].info.key_id}"
    # Tool calls pair with their results, whichever framework wrote them.
    assert acta[2].call_id == acta[3].call_id != ""
    assert acta[6].call_id == acta[7].call_id != ""
