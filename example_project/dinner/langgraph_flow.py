"""The reminder's turn in the session every framework shares, as a LangGraph graph.

One node on a scripted answer (no model, no network): it reads the search agent's last
answer from the shared chronicum and sets a reminder. The graph's checkpointer is
:class:`~chronica.integrations.langgraph.ChronicaSaver` with the agent's own credential:
the thread is the shared chronicum, so the reminder's message is an actum of it, attested
as the reminder's, which the booking agent's window then shows.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph

from chronica import services
from chronica.integrations.langgraph import ChronicaSaver
from example_project.dinner.scenario import CAKE_SHOP, REMINDER


def reminder_graph(saver: ChronicaSaver, owner_id: str, chronicum_id: str) -> Any:
    """A graph of one node that answers once the search agent has named the cake shop."""

    def remind(state: MessagesState) -> dict[str, Any]:
        said = services.get_acta(owner_id, chronicum_id, actors=["search"], kinds=["message"])
        if not said or CAKE_SHOP not in said[-1].content:
            return {"messages": []}
        return {"messages": [AIMessage(content=REMINDER, name="reminder")]}

    builder = StateGraph(MessagesState)
    builder.add_node("remind", remind)
    builder.add_edge(START, "remind")
    return builder.compile(checkpointer=saver)


async def reminder_turn(owner_id: str, chronicum_id: str, identity: services.Identity) -> None:
    """reminder reads search's answer and records its own, with its credential."""
    saver = ChronicaSaver(owner_id, agent="reminder", identity=identity)
    graph = reminder_graph(saver, owner_id, chronicum_id)
    config = {"configurable": {"thread_id": chronicum_id}}
    await sync_to_async(graph.invoke)({"messages": []}, config)
