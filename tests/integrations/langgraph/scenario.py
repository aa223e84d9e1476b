"""A small LangGraph agent with a scripted model (no network): it asks a tool for the
weather when the person asks about it, then answers; otherwise it echoes."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

OWNER = "lg-owner"
OTHER = "lg-other"


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def scripted_model(state: MessagesState) -> dict[str, Any]:
    last = state["messages"][-1]
    turn = sum(isinstance(m, HumanMessage) for m in state["messages"])
    if isinstance(last, ToolMessage):
        reply = AIMessage(content=f"It is {last.content}.", id=f"ai-answer-{turn}")
    elif "weather" in str(last.content):
        reply = AIMessage(
            content="",
            id=f"ai-call-{turn}",
            tool_calls=[{"name": "weather", "args": {"city": "Lyon"}, "id": f"call-{turn}"}],
        )
    else:
        reply = AIMessage(content=f"You said: {last.content}", id=f"ai-echo-{turn}")
    return {"messages": [reply]}


def build(checkpointer: Any) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("agent", scripted_model)
    builder.add_node("tools", ToolNode([weather]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=checkpointer)


def config(thread_id: str, **more: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, **more}}


def say(text: str, turn: int) -> dict[str, Any]:
    return {"messages": [HumanMessage(content=text, id=f"human-{turn}")]}
