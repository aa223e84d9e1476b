"""chronica against ADK's own session services, on the same random sequences.

Hypothesis draws sequences of create (with state of every prefix), get (with
``num_recent_events`` and ``after_timestamp``), list (with and without a user),
append (text, thoughts, function calls and responses, state deltas of every prefix),
delete and get_user_state, over two users and two session IDs. Each sequence runs on
ADK's ``InMemorySessionService``, its ``DatabaseSessionService`` on
sqlite+aiosqlite, and ``ChronicaSessionService`` (on the in-memory store and on
DjangoStore); every answer, every error and every session read back must be the same.

Each service keeps the latest ``Session`` object of each session it handed out, so no
append is stale (ADK's database service would refuse a stale one; chronica, like
ADK's in-memory service, appends it: tests/integrations/google_adk/test_google_adk.py).
"""

from __future__ import annotations

import copy
import itertools
import uuid
from typing import Any

import pytest
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.platform import time as platform_time
from google.adk.platform import uuid as platform_uuid
from google.adk.sessions import InMemorySessionService, Session
from google.adk.sessions.base_session_service import BaseSessionService, GetSessionConfig
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.genai import types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronica.integrations.google_adk import ChronicaSessionService

from .scenario import STORES, run, using

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

USERS = ["ardian", "rafa"]
SESSION_IDS = ["s1", "s2"]
START = 1_700_000_000.0

keys = st.sampled_from(["", "app:", "user:", "temp:"]).flatmap(
    lambda prefix: st.sampled_from(["party", "time", "area"]).map(lambda k: prefix + k)
)
values = st.one_of(
    st.none(), st.integers(-5, 5), st.sampled_from(["Kemang", "7pm"]), st.lists(st.integers(0, 3))
)
states = st.dictionaries(keys, values, max_size=3)
# ADK's own services disagree on temp: keys in create_session's state (the database
# service hands them back, the in-memory one drops them): they are left out there.
initial_states = st.dictionaries(
    keys.filter(lambda k: not k.startswith("temp:")), values, max_size=3
)
users = st.sampled_from(USERS)
session_ids = st.sampled_from(SESSION_IDS)

operations = st.one_of(
    st.tuples(st.just("create"), users, st.one_of(st.none(), session_ids), initial_states),
    st.tuples(
        st.just("get"),
        users,
        session_ids,
        st.one_of(st.none(), st.integers(0, 4)),
        st.one_of(st.none(), st.integers(1, 6)),
    ),
    st.tuples(st.just("list"), st.one_of(st.none(), users)),
    st.tuples(
        st.just("append"),
        users,
        session_ids,
        st.sampled_from(["text", "thought", "call", "response", "bare", "partial"]),
        states,
    ),
    st.tuples(st.just("delete"), users, session_ids),
    st.tuples(st.just("user_state"), users),
)


def event(number: int, shape: str, delta: dict[str, Any]) -> Event:
    """The ``number``th event of a sequence, with an ID and a timestamp of its own."""
    part = {
        "text": types.Part(text=f"turn {number}"),
        "thought": types.Part(text=f"thinking {number}", thought=True),
        "call": types.Part(
            function_call=types.FunctionCall(id=f"call-{number}", name="search", args={"n": number})
        ),
        "response": types.Part(
            function_response=types.FunctionResponse(
                id=f"call-{number - 1}", name="search", response={"tables": number}
            )
        ),
    }.get(shape)
    return Event(
        id=f"event-{number}",
        invocation_id="inv",
        author="user" if shape == "text" else "concierge",
        timestamp=START + 100 + number,
        content=None if part is None else types.Content(role="model", parts=[part]),
        actions=EventActions(state_delta=dict(delta)),
        partial=True if shape == "partial" else None,
    )


def seen(session: Session | None) -> Any:
    if session is None:
        return None
    return (
        session.id,
        session.app_name,
        session.user_id,
        copy.deepcopy(session.state),  # as it is now: a later append may change the object
        [e.model_dump(mode="json", exclude_none=True) for e in session.events],
        round(session.last_update_time, 6),
    )


async def play(service: BaseSessionService, app: str, sequence: list[tuple]) -> list[Any]:
    """What ``service`` answers to each operation of ``sequence``."""
    # The clock reads the number of the operation: the same for every service, however
    # often each one looks at it.
    now = [START]
    ids = itertools.count(1)
    platform_time.set_time_provider(lambda: now[0])
    platform_uuid.set_id_provider(lambda: f"minted-{next(ids)}")
    latest: dict[tuple[str, str], Session] = {}
    answers: list[Any] = []
    try:
        for number, (name, *args) in enumerate(sequence):
            now[0] = START + number + 1
            try:
                answers.append(await step(service, app, latest, number, name, args))
            except Exception as exc:
                answers.append(type(exc).__name__)
    finally:
        platform_time.reset_time_provider()
        platform_uuid.reset_id_provider()
    return answers


async def step(
    service: BaseSessionService,
    app: str,
    latest: dict[tuple[str, str], Session],
    number: int,
    name: str,
    args: list[Any],
) -> Any:
    if name == "create":
        user, session_id, state = args
        session = await service.create_session(
            app_name=app, user_id=user, session_id=session_id, state=dict(state)
        )
        latest[(user, session.id)] = session
        return seen(session)
    if name == "get":
        user, session_id, recent, after = args
        config = GetSessionConfig(
            num_recent_events=recent, after_timestamp=None if after is None else START + 100 + after
        )
        session = await service.get_session(
            app_name=app, user_id=user, session_id=session_id, config=config
        )
        if session is not None:
            latest[(user, session_id)] = session
        return seen(session)
    if name == "list":
        (user,) = args
        listed = await service.list_sessions(app_name=app, user_id=user)
        return [seen(s) for s in listed.sessions]
    if name == "append":
        user, session_id, shape, delta = args
        session = latest.get((user, session_id)) or Session(
            id=session_id, app_name=app, user_id=user
        )
        appended = await service.append_event(session, event(number, shape, delta))
        return appended.model_dump(mode="json", exclude_none=True), seen(session)
    if name == "delete":
        user, session_id = args
        await service.delete_session(app_name=app, user_id=user, session_id=session_id)
        return None
    (user,) = args
    return await service.get_user_state(app_name=app, user_id=user)


async def on_database(app: str, sequence: list[tuple]) -> list[Any]:
    service = DatabaseSessionService("sqlite+aiosqlite:///:memory:")
    try:
        return await play(service, app, sequence)
    finally:
        await service.close()


@pytest.mark.parametrize("store", STORES)
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(sequence=st.lists(operations, min_size=1, max_size=12))
def test_chronica_answers_as_adk_does(store, sequence):
    app = f"dinner-{uuid.uuid4().hex[:8]}"  # one app per example: nothing left from the last
    reference = run(play)(InMemorySessionService(), app, sequence)
    database = run(on_database)(app, sequence)
    with using(store):
        ours = run(play)(ChronicaSessionService(), app, sequence)

    assert database == reference
    assert ours == reference
