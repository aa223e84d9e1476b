"""ADK's own memory management on ChronicaSessionService: a Runner with
``EventsCompactionConfig`` (a scripted summariser, no network) and ``rewind_async``,
run end to end, read back equal to ADK's InMemorySessionService on the same script."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.apps.app import App, EventsCompactionConfig
from google.adk.apps.base_events_summarizer import BaseEventsSummarizer
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from chronica import services
from chronica.integrations.google_adk import ChronicaSessionService, chronicum_id
from example_project.dinner.adk_flow import ScriptedLlm

from .scenario import OWNER, run

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.filterwarnings(r"ignore:\[EXPERIMENTAL\]:UserWarning"),
]

APP = "dinner"
TURNS = ["A table for four?", "In Kemang.", "Friday at 7pm.", "Quiet, please.", "Book it."]


class ScriptedSummarizer(BaseEventsSummarizer):
    """Summarises the events it is given into one event: "summary of N events"."""

    async def maybe_summarize_events(self, *, events: list[Event]) -> Event | None:
        if not events:
            return None
        content = types.Content(role="model", parts=[types.Part(text=f"summary of {len(events)}")])
        return Event(
            author="user",
            actions=EventActions(
                compaction=EventCompaction(
                    start_timestamp=events[0].timestamp,
                    end_timestamp=events[-1].timestamp,
                    compacted_content=content,
                )
            ),
            invocation_id=Event.new_id(),
        )


def app() -> App:
    replies = [types.Part(text=f"reply {i}") for i in range(len(TURNS))]
    return App(
        name=APP,
        root_agent=LlmAgent(name="concierge", model=ScriptedLlm(model="concierge", script=replies)),
        events_compaction_config=EventsCompactionConfig(
            summarizer=ScriptedSummarizer(), compaction_interval=2, overlap_size=0
        ),
    )


async def play(service: Any) -> Any:
    session = await service.create_session(app_name=APP, user_id=OWNER)
    runner = Runner(app=app(), session_service=service)
    invocations = []
    for text in TURNS:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(
            user_id=OWNER, session_id=session.id, new_message=message
        ):
            invocations.append(event.invocation_id)
    # Back to before the fourth turn.
    fourth = next(
        e.invocation_id
        for e in (
            await service.get_session(app_name=APP, user_id=OWNER, session_id=session.id)
        ).events
        if e.content and e.content.parts and e.content.parts[0].text == TURNS[3]
    )
    await runner.rewind_async(
        user_id=OWNER, session_id=session.id, rewind_before_invocation_id=fourth
    )
    return await service.get_session(app_name=APP, user_id=OWNER, session_id=session.id)


def shape(session: Any) -> list[Any]:
    return [
        (
            e.author,
            [p.text for p in (e.content.parts if e.content else []) if p.text],
            bool(e.actions and e.actions.compaction),
            bool(e.actions and e.actions.rewind_before_invocation_id),
        )
        for e in session.events
    ]


def test_compaction_and_rewind_read_back_as_on_adks_own_service():
    ours = run(play)(ChronicaSessionService())
    theirs = run(play)(InMemorySessionService())
    assert shape(ours) == shape(theirs)
    assert any(compacted for _, _, compacted, _ in shape(ours))
    assert any(rewound for *_, rewound in shape(ours))
    # Everything ADK recorded is an actum of the owner's chronicum, nothing removed.
    acta = services.get_acta(OWNER, chronicum_id(APP, OWNER, ours.id))
    assert len(acta) == len(ours.events)
