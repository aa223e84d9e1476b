"""ChronicaSessionService in a session other frameworks share: plain session IDs, the
person as ``user_actor``, an agent's credential; and events it refuses before writing."""

from __future__ import annotations

import pytest
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.events.event import Event
from google.genai import types

from chronica import Actum, InvalidActum, NotPermitted, services
from chronica.integrations.google_adk import ChronicaSessionService, chronicum_id
from chronica.services import OwnerIdentity

from .scenario import APP, OWNER, STORES, reply, run, said, using

pytestmark = pytest.mark.django_db(transaction=True)

SHARED = "dinner-friday"


@pytest.fixture(params=STORES, autouse=True)
def store(request: pytest.FixtureRequest):
    with using(request.param):
        yield


def persons(text: str, owner: str = OWNER) -> Actum:
    """What the person says, recorded as the person (the app, or the API)."""
    actum = Actum(
        chronicum_id=SHARED, kind="message", actor_kind="human", actor="ardian", content=text
    )
    return services.acting_as(OwnerIdentity(owner)).record_actum(owner, actum)


def test_scoped_ids_stay_the_default():
    service = ChronicaSessionService()
    session = run(service.create_session)(app_name=APP, user_id=OWNER, session_id=SHARED)
    run(service.append_event)(session, said("Hello."))
    assert len(services.get_acta(OWNER, chronicum_id(APP, OWNER, SHARED))) == 1
    with pytest.raises(ValueError, match="session_ids"):
        ChronicaSessionService(session_ids="global")  # type: ignore[arg-type]


def test_a_plain_session_joins_the_chronicum_others_write_and_reads_them():
    persons("Find us a quiet table for four in Kemang on Friday at 7pm.")
    services.record_actum(
        OWNER,
        Actum(
            chronicum_id=SHARED,
            kind="message",
            actor_kind="agent",
            actor="concierge",
            content="Search first.",
            data={"role": "assistant", "content": "Search first."},  # an OpenAI SDK item
        ),
    )
    service = ChronicaSessionService(session_ids="plain")
    session = run(service.create_session)(
        app_name=APP, user_id=OWNER, session_id=SHARED, state={"party": 4}
    )
    run(service.append_event)(session, reply("Rumah Teduh has a table.", author="booking"))

    got = run(service.get_session)(app_name=APP, user_id=OWNER, session_id=SHARED)
    assert got is not None
    assert [(e.author, e.content.parts[0].text) for e in got.events] == [
        ("user", "Find us a quiet table for four in Kemang on Friday at 7pm."),
        ("concierge", "Search first."),
        ("booking", "Rumah Teduh has a table."),
    ]
    assert got.state == {"party": 4}
    assert [a.actor for a in services.get_acta(OWNER, SHARED)] == ["ardian", "concierge", "booking"]
    # One ADK session in a chronicum; and another owner's chronicum is nobody else's.
    with pytest.raises(AlreadyExistsError):
        run(service.create_session)(app_name=APP, user_id=OWNER, session_id=SHARED)
    with pytest.raises(AlreadyExistsError):
        run(service.create_session)(app_name=APP, user_id="rafa", session_id=SHARED)
    assert run(service.get_session)(app_name=APP, user_id="rafa", session_id=SHARED) is None


def test_the_person_is_user_actor():
    service = ChronicaSessionService(user_actor=lambda user_id: f"person-{user_id}")
    session = run(service.create_session)(app_name=APP, user_id=OWNER)
    run(service.append_event)(session, said("Hello."))
    (actum,) = services.get_acta(OWNER, chronicum_id(APP, OWNER, session.id))
    assert (actum.actor_kind, actum.actor) == ("human", f"person-{OWNER}")
    named = ChronicaSessionService(user_actor="ardian")
    assert named.actor_of("1") == "ardian"


def test_with_a_credential_the_agents_events_are_attested_and_the_person_stays_the_persons():
    issued = services.issue_credential(OWNER, "booking")
    identity = services.authenticate_credential(issued.secret)
    service = ChronicaSessionService(session_ids="plain", identity=identity)
    persons("Rumah Teduh, please.")
    session = run(service.create_session)(app_name=APP, user_id=OWNER, session_id=SHARED)

    # The runner appends the person's turn: recorded by the person already, not again.
    run(service.append_event)(session, said("Rumah Teduh, please."))
    run(service.append_event)(session, reply("Held.", author="booking_agent"))
    with pytest.raises(NotPermitted):
        run(service.append_event)(session, said("Yes, book it and pay."))

    acta = services.get_acta(OWNER, SHARED)
    assert [(a.actor, a.content, a.recorded_by) for a in acta] == [
        ("ardian", "Rumah Teduh, please.", "owner"),
        ("booking", "Held.", f"credential:{issued.info.key_id}"),
    ]
    got = run(service.get_session)(app_name=APP, user_id=OWNER, session_id=SHARED)
    assert got is not None
    assert [e.author for e in got.events] == ["user", "booking_agent"]
    # It acts for its owner only.
    with pytest.raises(NotPermitted):
        run(service.get_session)(app_name=APP, user_id="rafa", session_id=SHARED)


def test_text_no_database_keeps_is_refused_and_nothing_is_written():
    service = ChronicaSessionService()
    session = run(service.create_session)(app_name=APP, user_id=OWNER)
    with pytest.raises(InvalidActum, match="surrogate"):
        run(service.append_event)(session, said("Rumah Teduh\ud800"))
    assert services.get_acta(OWNER, chronicum_id(APP, OWNER, session.id)) == []


@pytest.mark.parametrize("timestamp", ["soon", None, [1.0]])
def test_an_event_with_a_timestamp_that_is_no_time_is_refused_and_reads_keep_working(timestamp):
    service = ChronicaSessionService()
    session = run(service.create_session)(app_name=APP, user_id=OWNER)
    run(service.append_event)(session, said("First."))
    bad = said("Second.")
    bad.timestamp = timestamp  # pydantic does not check an assignment
    with pytest.raises(InvalidActum, match="timestamp"):
        run(service.append_event)(session, bad)

    got = run(service.get_session)(app_name=APP, user_id=OWNER, session_id=session.id)
    assert got is not None
    assert [e.content.parts[0].text for e in got.events] == ["First."]


def test_an_event_that_would_not_read_back_is_refused():
    service = ChronicaSessionService()
    session = run(service.create_session)(app_name=APP, user_id=OWNER)
    bad = Event(
        invocation_id="inv-1",
        author="user",
        content=types.Content(role="user", parts=[types.Part(text="x")]),
    )
    bad.author = 4  # type: ignore[assignment]
    with pytest.raises(InvalidActum, match="would not read back"):
        run(service.append_event)(session, bad)
