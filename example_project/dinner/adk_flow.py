"""dinner-friday with Google ADK agents whose session lives in chronica.

Three ADK ``LlmAgent``s on a scripted model (no network, no API key): the concierge
(the root) transfers to finder, which calls its ``search`` tool and answers; on
ardian's choice finder transfers to booking, which holds the table and keeps its
answer in the session state (``output_key``). ADK's ``Runner`` appends every event
to ``ChronicaSessionService``: each one is an actum of the owner's chronicum, so the
admin, the API and every other agent's ``get_acta`` see the session like any other.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections.abc import AsyncGenerator, Iterator
from typing import Any

from asgiref.sync import async_to_sync
from django.urls import reverse
from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.events.event import Event
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import Session
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types
from pydantic import Field

from chronica import services
from chronica.integrations.google_adk import ChronicaSessionService, chronicum_id
from example_project.dinner.scenario import (
    BIRTHDAY,
    BOOKING_CAKE,
    BOOKING_REPLY,
    CAKE_SHOP,
    CHRONICUM,
    SEVEN,
)

APP = "dinner"
SESSION = f"{CHRONICUM}-adk"
REQUEST = SEVEN[0][3]
CHOICE = "Rumah Teduh, please."
ANSWER = "Rumah Teduh has a quiet table for four at 7pm; Kayu Manis has one too."
TABLES = [{"name": "Rumah Teduh", "table": True}, {"name": "Kayu Manis", "table": True}]

session_service = ChronicaSessionService()


class ScriptedLlm(BaseLlm):
    """A model that answers each request with the next part of its script."""

    script: list[types.Part] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        yield LlmResponse(content=types.Content(role="model", parts=[self.script.pop(0)]))


def search(area: str, party: int) -> dict[str, Any]:
    """Quiet tables for ``party`` in ``area`` on Friday at 7pm."""
    return {"area": area, "party": party, "tables": TABLES}


def _call(name: str, **args: Any) -> types.Part:
    return types.Part(function_call=types.FunctionCall(name=name, args=args))


def agents() -> LlmAgent:
    """The concierge and its two sub-agents, each with a fresh script."""
    finder = LlmAgent(
        name="finder",
        description="Finds quiet tables.",
        model=ScriptedLlm(
            model="finder",
            script=[
                _call("search", area="Kemang", party=4),
                types.Part(text=ANSWER),
                _call("transfer_to_agent", agent_name="booking"),
            ],
        ),
        tools=[search],
    )
    booking = LlmAgent(
        name="booking",
        description="Holds the table the person chose.",
        model=ScriptedLlm(model="booking", script=[types.Part(text=BOOKING_REPLY)]),
        output_key="booking",
    )
    return LlmAgent(
        name="concierge",
        description="Plans ardian's dinners.",
        model=ScriptedLlm(
            model="concierge", script=[_call("transfer_to_agent", agent_name="finder")]
        ),
        sub_agents=[finder, booking],
    )


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    # ADK warns about context caching and token usage a scripted model has no use for.
    logger = logging.getLogger("google_adk")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


async def dinner(owner_id: str) -> tuple[Session, list[Event]]:
    """ardian asks, finder searches and answers, ardian chooses, booking holds it.

    Each run starts a session no earlier run used (``dinner-friday-adk``, then ``-2``,
    ``-3``...). Returns the session created and the events the runner yielded."""
    for n in itertools.count(1):
        try:
            session = await session_service.create_session(
                app_name=APP, user_id=owner_id, session_id=SESSION if n == 1 else f"{SESSION}-{n}"
            )
        except AlreadyExistsError:
            continue
        break
    runner = Runner(app_name=APP, agent=agents(), session_service=session_service)
    events = []
    with _quiet():
        for text in (REQUEST, CHOICE):
            message = types.Content(role="user", parts=[types.Part(text=text)])
            async for event in runner.run_async(
                user_id=owner_id, session_id=session.id, new_message=message
            ):
                events.append(event)
    return session, events


def adk_dinner(owner_id: str) -> list[str]:
    """For ``manage.py chronica_demo``: run the dinner; return the lines to print."""
    session, events = async_to_sync(dinner)(owner_id)
    reloaded = async_to_sync(session_service.get_session)(
        app_name=APP, user_id=owner_id, session_id=session.id
    )
    assert reloaded is not None
    cid = chronicum_id(APP, owner_id, session.id)
    acta = services.get_acta(owner_id, cid)
    same = [e for e in reloaded.events if e.author != "user"] == events
    lines = [
        f"Google ADK agents (a Runner, scripted models, no network) kept their session in"
        f" chronica, chronicum {cid}: {len(reloaded.events)} events, {len(acta)} acta",
        *(f"  {a.actor_kind:<6} {a.actor:<10} {a.kind:<14} {a.content}" for a in acta),
        f"  state: {reloaded.state}; reloaded equal to what the runner appended: {same}",
    ]
    # The example project serves the admin; the chronicum's page lists every event.
    lines.append(f"  in the admin: {reverse('admin:chronica_chronicum_change', args=[cid])}")
    return lines


# -- booking's turn in the session every framework shares ----------------------------


def add_to_booking(note: str) -> dict[str, Any]:
    """Add ``note`` to the table's booking at the restaurant."""
    return {"confirmation": "RT-4821", "note": note, "updated": True}


def booking() -> LlmAgent:
    """The booking agent alone (no transfers), on a fresh script."""
    return LlmAgent(
        name="booking",
        description="Holds tables and tells restaurants what the guests need.",
        model=ScriptedLlm(
            model="booking",
            script=[
                _call("add_to_booking", note=f"Birthday cake from {CAKE_SHOP}, after dinner."),
                types.Part(text=BOOKING_CAKE),
            ],
        ),
        tools=[add_to_booking],
    )


BOOKING_WINDOW = GetSessionConfig(num_recent_events=4)


async def booking_turn(owner_id: str, chronicum_id: str, identity: services.Identity) -> None:
    """booking reads its window of the shared session (the last four events, whoever
    wrote them) and updates the booking, with its own credential. ADK's runner starts a
    turn with the person's message: the person recorded it already, so it is not
    written again (``ChronicaSessionService`` with an agent's credential)."""
    service = ChronicaSessionService(session_ids="plain", identity=identity)
    await service.create_session(app_name=APP, user_id=owner_id, session_id=chronicum_id)
    runner = Runner(app_name=APP, agent=booking(), session_service=service)
    message = types.Content(role="user", parts=[types.Part(text=BIRTHDAY)])
    with _quiet():
        async for _ in runner.run_async(
            user_id=owner_id,
            session_id=chronicum_id,
            new_message=message,
            run_config=RunConfig(get_session_config=BOOKING_WINDOW),
        ):
            pass
