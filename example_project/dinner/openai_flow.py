"""The booking of dinner-friday as a real OpenAI Agents SDK run, with no network.

The concierge hands the booking over to the booking agent, which calls its
``hold_table`` function tool and confirms. The models are the SDK's own scripted
test model (``agents.testing.ScriptedModel``): every model answer is written out
below, everything else (the runner, the handoff, the tool call, the session) is
the SDK as it runs in production. Every item of the run lands in one chronicum
through :class:`~chronica.integrations.openai_agents.ChronicaSession`, each under
the agent that produced it.
"""

from __future__ import annotations

from agents import Agent, RunConfig, Runner, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call
from asgiref.sync import async_to_sync

from chronica import Actum, ChronicumNotFound, services
from chronica.integrations.openai_agents import ChronicaSession
from example_project.dinner.scenario import CONCIERGE_BIRTHDAY

ASK = "Book Rumah Teduh for four at 7pm on Friday under Ardian."
CONFIRMATION = "RT-4821"


@function_tool
def hold_table(restaurant: str, party: int, day: str, time: str, name: str) -> str:
    """Hold a table and return the restaurant's confirmation."""
    return f"Held at {restaurant} for {party} on {day} at {time} under {name}: {CONFIRMATION}."


def dinner_agents() -> Agent[None]:
    """The concierge, who hands the booking over to the booking agent."""
    booking = Agent[None](
        name="booking",
        handoff_description="Holds tables at restaurants.",
        instructions="Hold the table the guest asked for and confirm it.",
        tools=[hold_table],
        model=ScriptedModel(
            [
                [
                    function_call(
                        "hold_table",
                        {
                            "restaurant": "Rumah Teduh",
                            "party": 4,
                            "day": "Friday",
                            "time": "19:00",
                            "name": "Ardian",
                        },
                        call_id="hold-rumah-teduh",
                    )
                ],
                [
                    assistant_message(
                        "A table for four at Rumah Teduh on Friday at 7pm is held. "
                        f"Confirmation {CONFIRMATION}."
                    )
                ],
            ]
        ),
    )
    return Agent[None](
        name="concierge",
        instructions="Plan the evening; hand bookings over to the booking agent.",
        handoffs=[booking],
        model=ScriptedModel(
            [
                [
                    assistant_message("Rumah Teduh it is: the booking agent will hold the table."),
                    function_call("transfer_to_booking", "{}", call_id="to-booking"),
                ]
            ]
        ),
    )


async def abook_with_agents(owner_id: str, chronicum_id: str) -> list[Actum]:
    """Run the booking with the SDK's runner on ``chronicum_id``; return the acta it added."""
    try:
        before = {actum.id for actum in await services.aget_acta(owner_id, chronicum_id)}
    except ChronicumNotFound:
        before = set()
    session = ChronicaSession(chronicum_id, owner_id=owner_id)
    # No trace export: the run stays offline. The runner still marks each agent's span
    # current, which is how the session knows who produced an item.
    await Runner.run(
        dinner_agents(), ASK, session=session, run_config=RunConfig(tracing_disabled=True)
    )
    return [a for a in await services.aget_acta(owner_id, chronicum_id) if a.id not in before]


def book_with_agents(owner_id: str, chronicum_id: str) -> list[Actum]:
    """:func:`abook_with_agents` for synchronous code, such as a management command."""
    return async_to_sync(abook_with_agents)(owner_id, chronicum_id)


# -- the concierge's turn in the session every framework shares ---------------------


def concierge() -> Agent[None]:
    """The concierge on a scripted model: it greets the news and says who does what."""
    return Agent[None](
        name="concierge",
        instructions="Plan the evening; say which agent does what.",
        model=ScriptedModel([[assistant_message(CONCIERGE_BIRTHDAY)]]),
    )


CONCIERGE_WINDOW = {"kinds": ["message", "thought"]}


async def concierge_turn(owner_id: str, chronicum_id: str, identity: services.Identity) -> None:
    """The concierge reads its window of the shared session (messages and thoughts) and
    answers, with its own credential: the person's turn is in the session already, so
    the run adds no input of its own."""
    session = ChronicaSession(chronicum_id, identity=identity, window=CONCIERGE_WINDOW)
    await Runner.run(concierge(), [], session=session, run_config=RunConfig(tracing_disabled=True))
