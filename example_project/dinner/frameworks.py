"""dinner-friday on every framework at once: one session, one agent per framework.

Each entry is an agent's turn in the session the person and the other agents share:
it reads its own window of that chronicum through its framework's chronica integration
and writes its answer back, with its own credential, so that every actum it records is
attested as that agent's. ``manage.py chronica_demo`` runs them in this order after
the person's message; a framework joins by adding its turn here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from chronica import services
from example_project.dinner import adk_flow, langgraph_flow, openai_flow, pydantic_flow


@dataclass(frozen=True, kw_only=True)
class Turn:
    """An agent of one framework, and how it takes its turn in a shared session."""

    framework: str
    agent: str
    """The agent's name: its actor, and whom its credential is issued for."""
    reads: str
    run: Callable[[str, str, services.Identity], Awaitable[None]]
    """``run(owner_id, chronicum_id, identity)``: read the window, answer, record."""


TURNS = (
    Turn(
        framework="OpenAI Agents SDK",
        agent="concierge",
        reads="messages and thoughts (ChronicaSession, window=)",
        run=openai_flow.concierge_turn,
    ),
    Turn(
        framework="PydanticAI",
        agent="search",
        reads="what the person said (ChronicaHistory, window=)",
        run=pydantic_flow.search_turn,
    ),
    Turn(
        framework="LangGraph",
        agent="reminder",
        reads="search's last answer (get_acta); its graph's state (ChronicaSaver)",
        run=langgraph_flow.reminder_turn,
    ),
    Turn(
        framework="Google ADK",
        agent="booking",
        reads="the last four events (ChronicaSessionService, session_ids='plain')",
        run=adk_flow.booking_turn,
    ),
)
