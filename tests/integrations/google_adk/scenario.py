"""The dinner-friday session as Google ADK events: ardian, the concierge, search and
booking; and the stores ChronicaSessionService runs on in the tests."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from asgiref.sync import async_to_sync
from django.test import override_settings
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.genai import types

from chronica import services

from ... import scenario

APP = "dinner"
OWNER = scenario.OWNER
STORES = ["memory", "django"]


_STORE_PATHS = {
    "memory": "chronica.stores.memory.InMemoryStore",
    "django": "chronica.stores.db.DjangoStore",  # the default store, as configured
}


@contextlib.contextmanager
def using(store: str) -> Iterator[None]:
    """chronica's configured store is ``store`` ("memory" or "django") meanwhile."""
    services.reset_chronicarius()
    with override_settings(CHRONICA={"STORE": _STORE_PATHS[store]}):
        yield
    services.reset_chronicarius()


def said(
    text: str,
    *,
    delta: dict[str, Any] | None = None,
    timestamp: float | None = None,
    partial: bool | None = None,
) -> Event:
    """What ardian types."""
    extra: dict[str, Any] = {} if timestamp is None else {"timestamp": timestamp}
    return Event(
        invocation_id="inv-1",
        author="user",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
        actions=EventActions(state_delta=delta or {}),
        partial=partial,
        **extra,
    )


def call() -> Event:
    return Event(
        invocation_id="inv-1",
        author="search",
        content=types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(
                        id="search-1", name="search", args={"area": "Kemang", "party": 4}
                    )
                )
            ],
        ),
    )


def response() -> Event:
    return Event(
        invocation_id="inv-1",
        author="search",
        content=types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id="search-1", name="search", response={"tables": ["Rumah Teduh"]}
                    )
                )
            ],
        ),
    )


def reply(text: str, author: str = "concierge") -> Event:
    return Event(
        invocation_id="inv-1",
        author=author,
        content=types.Content(role="model", parts=[types.Part(text=text)]),
    )


run = async_to_sync
"""Call a coroutine function from a test: its database work stays on the test's thread."""
