"""ChronicaSessionService: Google ADK's BaseSessionService on chronica.

``TestContract`` holds ADK's documented behaviour and runs it on ADK's own
InMemorySessionService and on chronica alike (on the in-memory store and on
DjangoStore): where the reference passes and chronica fails, chronica is wrong. The
other classes are what chronica adds or decides: one event is one actum, isolation,
stale sessions, concurrency.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from urllib.parse import quote

import pytest
from django.urls import reverse
from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions import InMemorySessionService, Session
from google.adk.sessions.base_session_service import BaseSessionService, GetSessionConfig
from google.genai import types

from chronica import ActorKind, ActumKind, ChronicumNotFound, services
from chronica.integrations.google_adk import ChronicaSessionService, chronicum_id
from chronica.stores.db import DjangoStore
from chronica.stores.memory import InMemoryStore

from .scenario import APP, OWNER, STORES, call, reply, response, run, said, using

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(params=["adk-in-memory", *STORES])
def sessions(request: pytest.FixtureRequest):
    """ADK's reference service and chronica's, for the promises both must keep."""
    if request.param == "adk-in-memory":
        yield InMemorySessionService()
        return
    with using(request.param):
        yield ChronicaSessionService()


@pytest.fixture(params=STORES)
def chronica(request: pytest.FixtureRequest):
    with using(request.param):
        yield ChronicaSessionService()


def create(service: BaseSessionService, **kwargs) -> Session:
    kwargs.setdefault("app_name", APP)
    kwargs.setdefault("user_id", OWNER)
    return run(service.create_session)(**kwargs)


def get(service: BaseSessionService, session: Session, **kwargs) -> Session | None:
    return run(service.get_session)(
        app_name=session.app_name, user_id=session.user_id, session_id=session.id, **kwargs
    )


def append(service: BaseSessionService, session: Session, event: Event) -> Event:
    return run(service.append_event)(session, event)


class TestContract:
    """BaseSessionService's docstrings, and InMemorySessionService where they are silent."""

    def test_a_missing_session_is_none(self, sessions):
        assert run(sessions.get_session)(app_name=APP, user_id=OWNER, session_id="x") is None

    def test_a_session_reads_back_equal(self, sessions):
        session = create(sessions, state={"party": 4}, session_id="dinner-friday")
        for event in (said("Find us a quiet table."), call(), response(), reply("Done.")):
            append(sessions, session, event)

        assert get(sessions, session) == session
        assert session.state == {"party": 4}
        assert [e.author for e in session.events] == ["user", "search", "search", "concierge"]

    def test_a_taken_id_is_already_exists_and_ids_are_stripped(self, sessions):
        create(sessions, session_id="dinner-friday")
        with pytest.raises(AlreadyExistsError):
            create(sessions, session_id=" dinner-friday ")

    def test_a_session_id_is_made_when_none_is_given(self, sessions):
        first, second = create(sessions), create(sessions)
        assert first.id
        assert second.id != first.id

    def test_two_users_each_have_a_session_of_one_id(self, sessions):
        mine = create(sessions, session_id="s1")
        append(sessions, mine, said("Mine."))
        theirs = create(sessions, user_id="rafa", session_id="s1")

        assert len(get(sessions, theirs).events) == 0
        assert len(get(sessions, mine).events) == 1

    def test_state_scopes(self, sessions):
        first = create(sessions, session_id="s1", state={"app:k1": 1, "user:k2": 2, "k3": 3})
        append(sessions, first, said("x", delta={"app:k4": 4, "user:k5": 5, "k6": 6, "temp:t": 7}))

        assert first.state["temp:t"] == 7  # in memory for this invocation only
        again = get(sessions, first)
        assert again.state == {
            "app:k1": 1,
            "app:k4": 4,
            "user:k2": 2,
            "user:k5": 5,
            "k3": 3,
            "k6": 6,
        }
        assert "temp:t" not in again.events[0].actions.state_delta
        mine = create(sessions, session_id="s2")
        assert mine.state == {"app:k1": 1, "app:k4": 4, "user:k2": 2, "user:k5": 5}
        theirs = create(sessions, user_id="rafa", session_id="s3")
        assert theirs.state == {"app:k1": 1, "app:k4": 4}
        assert run(sessions.get_user_state)(app_name=APP, user_id=OWNER) == {"k2": 2, "k5": 5}
        assert run(sessions.get_user_state)(app_name=APP, user_id="nobody") == {}

    def test_recent_events_and_timestamps(self, sessions):
        session = create(sessions)
        for n in range(6):
            append(sessions, session, said(f"turn {n}", timestamp=1000.0 + n))

        def texts(**config):
            got = get(sessions, session, config=GetSessionConfig(**config))
            return [e.content.parts[0].text for e in got.events]

        assert texts(num_recent_events=2) == ["turn 4", "turn 5"]
        assert texts(num_recent_events=0) == []
        assert texts(after_timestamp=1003.0) == ["turn 3", "turn 4", "turn 5"]
        assert texts(num_recent_events=2, after_timestamp=1001.0) == ["turn 4", "turn 5"]
        assert texts(num_recent_events=9, after_timestamp=1004.0) == ["turn 4", "turn 5"]

    def test_last_update_time_is_the_last_events(self, sessions):
        session = create(sessions)
        append(sessions, session, said("later", timestamp=session.last_update_time + 10))

        assert get(sessions, session).last_update_time == pytest.approx(session.last_update_time)

    def test_list_sessions_with_and_without_a_user_oldest_first(self, sessions):
        a = create(sessions, session_id="a", state={"k": "a"})
        b = create(sessions, session_id="b", user_id="rafa")
        append(sessions, a, said("later", timestamp=a.last_update_time + 100))

        mine = run(sessions.list_sessions)(app_name=APP, user_id=OWNER).sessions
        everyone = run(sessions.list_sessions)(app_name=APP).sessions

        assert [(s.user_id, s.id, s.events, s.state) for s in mine] == [
            (OWNER, "a", [], {"k": "a"})
        ]
        assert [(s.user_id, s.id) for s in everyone] == [("rafa", "b"), (OWNER, "a")]
        assert run(sessions.list_sessions)(app_name="other").sessions == []
        assert b.id == "b"

    def test_delete_and_deleting_a_missing_session(self, sessions):
        session = create(sessions)
        run(sessions.delete_session)(app_name=APP, user_id=OWNER, session_id=session.id)
        run(sessions.delete_session)(app_name=APP, user_id=OWNER, session_id=session.id)

        assert get(sessions, session) is None
        with pytest.raises(SessionNotFoundError):
            append(sessions, session, said("Still there?"))

    def test_a_partial_event_is_not_stored(self, sessions):
        session = create(sessions)
        append(sessions, session, said("Thinking", partial=True))

        assert get(sessions, session).events == []

    def test_an_event_appended_twice_is_kept_once(self, sessions):
        session = create(sessions)
        event = said("Once.", delta={"count": 1})
        append(sessions, session, event)
        append(sessions, session, event)

        assert len(get(sessions, session).events) == 1

    def test_a_stale_session_object_appends_after_the_others(self, sessions):
        session = create(sessions)
        stale = get(sessions, session)
        append(sessions, session, said("first", delta={"a": 1}))

        append(sessions, stale, said("second", delta={"b": 2}))

        final = get(sessions, session)
        assert [e.content.parts[0].text for e in final.events] == ["first", "second"]
        assert final.state == {"a": 1, "b": 2}
        assert [e.content.parts[0].text for e in stale.events] == ["second"]


class TestOneEventOneActum:
    """What chronica adds: the session is a chronicum every agent and the admin read."""

    def test_kinds_actors_and_call_ids(self, chronica):
        session = create(chronica, session_id="dinner-friday")
        thought = Event(
            author="concierge",
            content=types.Content(
                role="model", parts=[types.Part(text="Search first.", thought=True)]
            ),
        )
        for event in (said("A quiet table for four."), thought, call(), response(), reply("Held.")):
            append(chronica, session, event)

        acta = services.get_acta(OWNER, chronicum_id(APP, OWNER, "dinner-friday"))
        assert [(a.kind, a.actor_kind, a.actor, a.call_id) for a in acta] == [
            (ActumKind.MESSAGE, ActorKind.HUMAN, OWNER, ""),
            (ActumKind.THOUGHT, ActorKind.AGENT, "concierge", ""),
            (ActumKind.TOOL_REQUEST, ActorKind.AGENT, "search", "search-1"),
            (ActumKind.TOOL_RESPONSE, ActorKind.AGENT, "search", "search-1"),
            (ActumKind.MESSAGE, ActorKind.AGENT, "concierge", ""),
        ]
        assert acta[0].content == "A quiet table for four."
        assert acta[2].content == 'search({"area": "Kemang", "party": 4})'
        assert [Event.model_validate(a.data) for a in acta] == session.events

    def test_an_event_without_text_reads_as_what_it_carries(self, chronica):
        session = create(chronica)
        append(
            chronica,
            session,
            Event(author="concierge", actions=EventActions(transfer_to_agent="booking")),
        )

        (actum,) = services.get_acta(OWNER, chronicum_id(APP, OWNER, session.id))
        assert actum.content == "(transfer to booking)"

    def test_another_users_session_is_never_visible(self, chronica):
        mine = create(chronica, session_id="s1", state={"secret": 1, "user:card": "4111"})
        append(chronica, mine, said("Mine."))
        cid = chronicum_id(APP, OWNER, "s1")

        with pytest.raises(ChronicumNotFound):
            services.get_acta("rafa", cid)
        forged = Session(id="s1", app_name=APP, user_id="rafa")
        with pytest.raises(SessionNotFoundError):
            append(chronica, forged, said("Theirs?"))
        assert run(chronica.get_session)(app_name=APP, user_id="rafa", session_id="s1") is None
        assert run(chronica.list_sessions)(app_name=APP, user_id="rafa").sessions == []
        assert run(chronica.get_user_state)(app_name=APP, user_id="rafa") == {}
        run(chronica.delete_session)(app_name=APP, user_id="rafa", session_id="s1")
        assert get(chronica, mine) == mine

    def test_the_api_and_the_admin_read_an_adk_session_like_any_other(
        self, chronica, ardian, client, admin_client
    ):
        owner = services.owner_id_for(ardian)
        session = create(chronica, user_id=owner, session_id="dinner friday/2")
        append(chronica, session, said("A quiet table for four."))
        cid = chronicum_id(APP, owner, "dinner friday/2")
        assert cid == f"adk:dinner:{owner}:dinner%20friday%2F2"

        client.force_login(ardian)
        answer = client.get(f"/api/chronica/{quote(cid, safe='')}/acta/")  # a path segment
        assert answer.status_code == 200
        assert [a["content"] for a in answer.json()] == ["A quiet table for four."]
        if isinstance(services.get_chronicarius().store, InMemoryStore):
            return  # the admin reads the Django tables
        page = admin_client.get(reverse("admin:chronica_chronicum_change", args=[cid]))
        assert page.status_code == 200
        assert "A quiet table for four." in page.content.decode()

    def test_a_chronicum_that_is_no_adk_session_is_not_one(self, chronica):
        services.create_chronicum(OWNER, chronicum_id(APP, OWNER, "plain"))

        assert run(chronica.get_session)(app_name=APP, user_id=OWNER, session_id="plain") is None
        with pytest.raises(AlreadyExistsError):
            create(chronica, session_id="plain")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("stale_sessions", ["append", "raise"])
def test_eight_concurrent_appends_on_separate_session_objects(chronica, stale_sessions):
    """8 runners, each with its own Session object read at the same moment, append
    10 events each at once, from 8 threads: none lost, none twice, each runner's
    events in its own order, and every state delta applied. With "raise" a runner
    whose object went stale reloads it and appends again, as ADK's database service
    asks of its callers."""
    service = ChronicaSessionService(stale_sessions=stale_sessions)
    session = create(service, session_id="busy")
    copies = [get(service, session) for _ in range(8)]
    start = threading.Barrier(8)
    errors: list[BaseException] = []
    refused = [0] * 8

    def runner(n: int) -> None:
        async def go() -> None:
            mine = copies[n]
            for i in range(10):
                event = said(f"{n}-{i}", delta={f"r{n}": i})
                while True:
                    try:
                        await service.append_event(mine, event)
                        break
                    except StaleSessionError:
                        refused[n] += 1
                        mine = await service.get_session(
                            app_name=APP, user_id=OWNER, session_id="busy"
                        )

        try:
            start.wait()
            run(go)()  # its database work on this thread's own connection
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            from django.db import connections

            connections.close_all()

    threads = [threading.Thread(target=runner, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    final = get(service, session)
    texts = [e.content.parts[0].text for e in final.events]
    assert sorted(texts) == sorted(f"{n}-{i}" for n in range(8) for i in range(10))
    for n in range(8):
        mine = [t for t in texts if t.startswith(f"{n}-")]
        assert mine == [f"{n}-{i}" for i in range(10)]
        assert final.state[f"r{n}"] == 9
    assert len({e.id for e in final.events}) == 80
    assert (sum(refused) > 0) == (stale_sessions == "raise")


def test_importing_it_reaches_no_network():
    """google-adk pulls in google-genai, google-auth and opentelemetry: none of them may
    look anything up when the integration (and the Runner it serves) is imported."""
    code = (
        "import socket\n"
        "def refuse(*args, **kwargs):\n"
        "    raise OSError('the network was reached at import time')\n"
        "socket.socket.connect = socket.create_connection = socket.getaddrinfo = refuse\n"
        "import chronica.integrations.google_adk\n"
        "import google.adk.runners, google.adk.agents\n"
        "print('imported')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "imported"


class TestStaleSessionsRaise:
    """stale_sessions="raise": ADK's DatabaseSessionService's semantics, by its own tests."""

    @pytest.fixture(params=STORES)
    def strict(self, request):
        with using(request.param):
            yield ChronicaSessionService(stale_sessions="raise")

    def test_a_stale_session_object_is_refused_and_nothing_is_written(self, strict):
        original = create(strict)
        append(strict, original, said("first", delta={"sk1": "v1"}))
        updated = get(strict, original)
        append(strict, updated, said("second", delta={"sk2": "v2"}))

        with pytest.raises(StaleSessionError, match="modified in storage"):
            append(strict, original, said("third", delta={"sk3": "v3"}))

        final = get(strict, original)
        assert [e.content.parts[0].text for e in final.events] == ["first", "second"]
        assert "sk3" not in final.state
        append(strict, final, said("third, reloaded"))
        assert len(get(strict, original).events) == 3

    def test_of_two_copies_of_one_revision_one_wins(self, strict):
        session = create(strict)

        async def both():
            copies = [session.model_copy(deep=True) for _ in range(2)]
            return await asyncio.gather(
                *(strict.append_event(c, said(f"copy {n}")) for n, c in enumerate(copies)),
                return_exceptions=True,
            )

        outcomes = run(both)()

        assert sorted(type(o).__name__ for o in outcomes) == ["Event", "StaleSessionError"]
        assert len(get(strict, session).events) == 1

    def test_a_deleted_session_is_not_found_not_stale(self, strict):
        session = create(strict)
        run(strict.delete_session)(app_name=APP, user_id=OWNER, session_id=session.id)
        with pytest.raises(SessionNotFoundError):
            append(strict, session, said("gone"))

    def test_stale_sessions_is_append_or_raise(self):
        with pytest.raises(ValueError, match="stale_sessions"):
            ChronicaSessionService(stale_sessions="merge")  # type: ignore[arg-type]


def test_a_read_session_is_what_adks_constructor_makes(chronica):
    """Sessions are ADK's own Session(...), every field set."""
    session = create(chronica, state={"party": 4})
    append(chronica, session, said("first", delta={"user:area": "Kemang"}))
    got = get(chronica, session)
    (listed,) = run(chronica.list_sessions)(app_name=APP, user_id=OWNER).sessions
    for read in (got, listed):
        assert read is not None
        made = Session(**{name: getattr(read, name) for name in Session.model_fields})
        assert read == made
        assert read.model_fields_set == made.model_fields_set


def test_no_caller_changes_what_another_read_gets(chronica):
    """Each read decodes its events afresh: a caller that changes any part of a read
    session's events, however deep, changes nothing another read gets."""
    session = create(chronica)
    append(chronica, session, call())
    append(chronica, session, said("then", delta={"plan": {"party": 4}}))
    before = get(chronica, session)
    assert before is not None
    given = get(chronica, session)
    assert given is not None
    given.events[0].content.parts[0].function_call.args["party"] = 99
    given.events[0].content.parts.append(types.Part(text="added"))
    given.events[1].actions.state_delta["plan"]["party"] = 2
    given.events[1].content.parts[0].text = "changed"
    given.events[1].actions.state_delta["new"] = True
    given.events.pop()
    assert get(chronica, session) == before


def test_it_runs_on_the_store_chronica_is_configured_with_by_default():
    """No CHRONICA["STORE"] of the test's own: the default DjangoStore keeps the state
    (it is a StateStore itself, not through a subclass)."""

    services.reset_chronicarius()
    try:
        assert type(services.get_chronicarius().store) is DjangoStore
        service = ChronicaSessionService()
        session = create(service, session_id="default-store", state={"party": 4})
        append(service, session, said("Is there a quiet table?", delta={"user:area": "Kemang"}))
        again = get(service, session)
        assert again is not None
        assert again.state == {"party": 4, "user:area": "Kemang"}
        assert [e.content.parts[0].text for e in again.events] == ["Is there a quiet table?"]
    finally:
        services.reset_chronicarius()
