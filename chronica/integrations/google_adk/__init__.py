"""Google ADK sessions kept in chronica: ``ChronicaSessionService``.

``pip install "chronica[google-adk]"``, then give it to a ``Runner`` in place of ADK's
own ``InMemorySessionService``::

    runner = Runner(app_name="dinner", agent=concierge, session_service=ChronicaSessionService())

ADK's ``user_id`` is chronica's owner. Which chronicum holds a session is the
service's ``session_ids``:

* ``"scoped"`` (the default): ``chronicum_id(app_name, user_id, session_id)``,
  ``adk:<app>:<user>:<session>`` with each part percent-escaped (all but letters,
  digits and ``-._~``). ADK users expect what ADK's own services do: a session ID is
  the app's and the user's, so two users (or two apps) may each have a session
  ``s1``. Chronicum IDs are global, so the app and the user are part of the ID; the
  owner check of chronica keeps each user to their own.
* ``"plain"``: the session ID is the chronicum ID, so that an ADK agent joins the
  session that agents of other frameworks, the API and the person share
  (``dinner-friday``). The first owner to use an ID has it, as for any chronicum.

Each event is one actum of it, recorded through ``chronica.services``: its kind from
the event's parts (text: message, thought parts alone: thought, a function call: tool
request, a function response: tool response, ``call_id`` the call's ID), under the
agent that wrote it (the user's turns under ``user_actor``, ``actor_kind=human``),
``content`` the text people read and ``data`` the event as ADK serialises it. Partial
events are not stored. An actum that another framework, the API or the person
recorded into the chronicum reads back as an event of its text, authored by its
actor (``"user"`` for a person). The session's state is the chronicum's state in the
namespace ``adk:<app>``; ``user:`` state is the owner's state there and ``app:`` state
the namespace's, all changed in the same transaction as the event's append. ``temp:``
state is never stored.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, Literal
from urllib.parse import quote

from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.platform import time as platform_time
from google.adk.platform import uuid as platform_uuid
from google.adk.sessions.base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
)
from google.adk.sessions.session import Session
from google.adk.sessions.state import State
from pydantic_core import to_jsonable_python

from chronica import (
    ActorKind,
    Actum,
    ActumKind,
    ChronicumExists,
    ChronicumNotFound,
    InvalidActum,
    NotPermitted,
    services,
)
from chronica.values import NamespaceListing, StateChange, StateScope

from .events import actum_of, event_key, event_of, events_of, stored_form
from .memory import ChronicaMemoryService

__all__ = [
    "ChronicaMemoryService",
    "ChronicaSessionService",
    "actum_of",
    "chronicum_id",
    "event_of",
    "events_of",
    "namespace",
]

# Where the acta of a long session are read from when a timestamp filters them.
_PAGE = 1000
_STALE = (
    "The session has been modified in storage since it was loaded. "
    "Please reload the session before appending more events."
)


def chronicum_id(app_name: str, user_id: str, session_id: str) -> str:
    """The chronicum that holds the ADK session ``(app_name, user_id, session_id)`` under
    the default ``session_ids="scoped"``."""
    return "adk:" + ":".join(quote(part, safe="") for part in (app_name, user_id, session_id))


def namespace(app_name: str) -> str:
    """The state namespace of an ADK app: its sessions' state, user state and app state."""
    return "adk:" + quote(app_name, safe="")


class ChronicaSessionService(BaseSessionService):
    """An ADK ``BaseSessionService`` on chronica's configured store.

    Behaves as ADK's ``InMemorySessionService`` does, with the differences the docs
    list. ``stale_sessions`` says what an append through a stale ``Session`` object
    (one that others appended to since it was read) does:

    * ``"append"`` (the default, as ``InMemorySessionService``): it is not an error.
      The event is appended after theirs, its state delta applied over the state
      they left (key by key, as ``dict.update``), and the object gains its own event
      only; ``get_session`` reads everyone's. Concurrent runners never fail.
    * ``"raise"`` (as ADK's ``DatabaseSessionService``): ``StaleSessionError``, and
      nothing is written; reload the session with ``get_session`` and append again.

    ``session_ids``: ``"scoped"`` (the default) or ``"plain"``, which chronicum holds a
    session (see the module). With ``"plain"``, ``create_session`` of an ID that is a
    chronicum of the user already (one other agents write into) makes it an ADK session
    too; one that holds an ADK session of this app already is ``AlreadyExistsError``.

    ``user_actor``: the actor of the user's events, a string or a function of ADK's
    ``user_id`` (default: the ``user_id``, the owner).

    ``identity``: where the service runs in an agent service, the agent's credential
    (``services.authenticate_credential(secret)``): every call keeps its rules. Only
    the credential's owner's sessions exist for it; the agents' events are written as
    the credential's actor (the ADK author stays in the event); listing and deleting
    only if the credential allows them. A user event is the person's, never the
    agent's: it is stored only if the person already recorded it (the chronicum's
    newest message by a human has its text, as when the app recorded the person's turn
    and then runs the agent on it), and then not again; any other is ``NotPermitted``
    and nothing is written.

    An event appended twice (equal, same ID) is stored once and its state delta
    applied once. An event that would not read back (a timestamp that is not a
    number, text no database keeps) is ``InvalidActum`` and nothing is written.
    """

    def __init__(
        self,
        *,
        stale_sessions: Literal["append", "raise"] = "append",
        session_ids: Literal["scoped", "plain"] = "scoped",
        user_actor: str | Callable[[str], str] | None = None,
        identity: services.Identity | None = None,
    ) -> None:
        if stale_sessions not in ("append", "raise"):
            raise ValueError(f"stale_sessions must be 'append' or 'raise', not {stale_sessions!r}")
        if session_ids not in ("scoped", "plain"):
            raise ValueError(f"session_ids must be 'scoped' or 'plain', not {session_ids!r}")
        self.stale_sessions = stale_sessions
        self.session_ids = session_ids
        self.user_actor = user_actor
        self.identity = identity

    def __repr__(self) -> str:
        return (
            f"<ChronicaSessionService stale_sessions={self.stale_sessions!r}"
            f" session_ids={self.session_ids!r}>"
        )

    @property
    def _calls(self) -> Any:
        # The configured Chronicarius, acting as the identity if there is one.
        return services if self.identity is None else services.acting_as(self.identity)

    def chronicum_of(self, app_name: str, user_id: str, session_id: str) -> str:
        """The chronicum that holds the session ``(app_name, user_id, session_id)``."""
        if self.session_ids == "plain":
            return session_id
        return chronicum_id(app_name, user_id, session_id)

    def actor_of(self, user_id: str) -> str:
        """The actor of ``user_id``'s own events."""
        user_actor = self.user_actor
        if user_actor is None:
            return user_id
        return user_actor if isinstance(user_actor, str) else user_actor(user_id)

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        session_id = (session_id.strip() if session_id else None) or platform_uuid.new_uuid()
        deltas = _state_deltas(state or {})
        now = platform_time.get_time()
        document = {"session_id": session_id, "state": deltas["session"], "updated": now}
        changes = [
            StateChange(namespace=namespace(app_name), set={**document, "last_event": ""}),
            *_shared_changes(app_name, deltas),
        ]
        cid = self.chronicum_of(app_name, user_id, session_id)
        try:
            await self._calls.aupdate_state(user_id, cid, changes, create=True)
        except ChronicumExists:
            if not await self._join(user_id, cid, changes):
                raise AlreadyExistsError(f"Session with id {session_id} already exists.") from None
        view = await self._calls.aget_state(user_id, namespace(app_name))
        return _session(app_name, user_id, document, view.namespace_state, view.owner_state)

    async def _join(self, user_id: str, cid: str, changes: list[StateChange]) -> bool:
        """With plain IDs, make the user's chronicum ``cid`` (one other agents write into)
        an ADK session; ``False`` if it holds one already, or is someone else's."""
        if self.session_ids != "plain":
            return False
        first, *rest = changes
        # Only where no ADK session is: a key the document lacks counts as None.
        claimed = StateChange(namespace=first.namespace, set=first.set, expect={"session_id": None})
        try:
            await self._calls.aupdate_state(user_id, cid, [claimed, *rest])
        except (ChronicumNotFound, services.StateConflict):
            return False
        return True

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        session_id = session_id.strip() if session_id else session_id
        recent = config.num_recent_events if config else None
        after = config.after_timestamp if config else None
        cid = self.chronicum_of(app_name, user_id, session_id)
        read_acta = recent != 0 and after is None
        try:
            view = await self._calls.aget_state(
                user_id, namespace(app_name), cid, acta=read_acta, last_n=recent or 0
            )
        except InvalidActum:
            return None  # an app name or a user ID chronica cannot keep has no session
        document = view.chronicum_state
        if view.chronicum is None or not _is_session(document, session_id):
            return None
        assert document is not None
        if read_acta:
            events = events_of(view.acta or ())
        elif recent == 0:
            events = []
        else:
            events = await self._events_since(user_id, cid, after, recent)
        return _session(app_name, user_id, document, view.namespace_state, view.owner_state, events)

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        try:
            listing = await self._calls.alist_namespace(user_id, namespace(app_name))
        except InvalidActum:
            return ListSessionsResponse()
        return ListSessionsResponse(sessions=_listed(app_name, listing))

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        session_id = session_id.strip() if session_id else session_id
        cid = self.chronicum_of(app_name, user_id, session_id)
        # ADK: deleting a session that is not there does nothing.
        with contextlib.suppress(ChronicumNotFound, InvalidActum):
            await self._calls.adelete_chronicum(user_id, cid)

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        try:
            view = await self._calls.aget_state(user_id, namespace(app_name))
        except InvalidActum:
            return {}
        return view.owner_state  # type: ignore[no-any-return]

    async def append_event(self, session: Session, event: Event) -> Event:
        if event.partial:
            return event
        app_name, user_id = session.app_name, session.user_id
        data = stored_form(event)
        delta = dict(data.get("actions", {}).get("state_delta", {}))
        stored_delta = {k: v for k, v in delta.items() if not k.startswith(State.TEMP_PREFIX)}
        if "actions" in data:
            data["actions"]["state_delta"] = stored_delta
        deltas = _state_deltas(stored_delta)
        expect: dict[str, Any] = {"session_id": session.id}
        if self.stale_sessions == "raise":
            # What the object saw last: its newest event, or (read without events)
            # the moment of the last append.
            if session.events:
                expect["last_event"] = session.events[-1].id
            else:
                expect["updated"] = session.last_update_time
        changes = [
            StateChange(
                namespace=namespace(app_name),
                # Only into the session's own chronicum: one that holds no ADK session
                # of this ID (deleted and taken by a plain chronicum since) is refused.
                expect=expect,
                set={"updated": event.timestamp, "last_event": event.id},
            ),
            StateChange(namespace=namespace(app_name), path=("state",), set=deltas["session"]),
            *_shared_changes(app_name, deltas),
        ]
        cid = self.chronicum_of(app_name, user_id, session.id)
        agent = self.identity if isinstance(self.identity, services.AgentIdentity) else None
        actum = actum_of(event, cid, self.actor_of(user_id), data, agent=agent)
        if agent is not None and actum.actor_kind is ActorKind.HUMAN:
            return await self._persons_turn(session, event, actum)
        try:
            recorded = await self._calls.arecord_acta(
                user_id, [actum], idempotency_key=event_key(data), state=changes
            )
        except ChronicumNotFound:
            raise SessionNotFoundError(f"Session {session.id} not found.") from None
        except services.StateConflict:
            view = await self._calls.aget_state(user_id, namespace(app_name), cid)
            if self.stale_sessions == "raise" and _is_session(view.chronicum_state, session.id):
                raise StaleSessionError(_STALE) from None
            raise SessionNotFoundError(f"Session {session.id} not found.") from None
        if recorded.replayed:
            return event  # ADK: an equal event appended again changes nothing
        await super().append_event(session=session, event=event)
        session.last_update_time = event.timestamp
        return event

    async def _persons_turn(self, session: Session, event: Event, actum: Actum) -> Event:
        """A user event under an agent's credential: the person's turn, which the person
        recorded already (then the session object gains it, nothing is written), or
        ``NotPermitted``."""
        try:
            newest = await self._calls.aget_acta(
                session.user_id,
                actum.chronicum_id,
                kinds=[ActumKind.MESSAGE],
                actor_kinds=[ActorKind.HUMAN],
                last_n=1,
            )
        except ChronicumNotFound:
            raise SessionNotFoundError(f"Session {session.id} not found.") from None
        if not newest or newest[0].content != actum.content:
            assert isinstance(self.identity, services.AgentIdentity)
            raise NotPermitted(
                f"the credential of {self.identity.actor!r} ({self.identity.key_id}) does not"
                " write the person's turns: record the person's message as the person first",
                rule="actor_kind",
            )
        await super().append_event(session=session, event=event)
        return event

    async def _events_since(
        self, user_id: str, cid: str, after: float | None, recent: int | None
    ) -> list[Event]:
        """The events with a timestamp at or after ``after``, the last ``recent`` of them
        (the filter first, then the limit, as ADK's database service does), read back a
        page at a time."""
        found: list[Event] = []
        before = None
        while True:
            try:
                page = await self._calls.aget_acta(user_id, cid, last_n=_PAGE, before=before)
            except ChronicumNotFound:
                return []
            for event in reversed(events_of(page)):
                if after is None or event.timestamp >= after:
                    found.append(event)
            if len(page) < _PAGE or (recent is not None and len(found) >= recent):
                break
            before = page[0].id
        found.reverse()
        return found[-recent:] if recent else found


def _listed(app_name: str, listing: NamespaceListing) -> list[Session]:
    """The sessions of ``listing``, as ADK orders them: by last update, user, ID."""
    # The app's and each user's state, prefixed, once for all their sessions.
    shared: dict[str, dict[str, Any]] = {}
    found = []
    for chronicum, document in listing.chronica:
        session_id = document.get("session_id")
        if not _is_session(document, session_id):
            continue
        found.append((float(document["updated"]), chronicum.owner_id, str(session_id), document))
    found.sort(key=lambda row: row[:3])
    sessions = []
    for updated, owner, session_id, document in found:
        theirs = shared.get(owner)
        if theirs is None:
            theirs = shared[owner] = _merged(
                listing.namespace_state, listing.owner_states.get(owner, {}), {}
            )
        state = dict(document["state"])
        state.update(theirs)
        sessions.append(
            Session(
                id=session_id,
                app_name=app_name,
                user_id=owner,
                state=state,
                events=[],
                last_update_time=updated,
            )
        )
    return sessions


def _session(
    app_name: str,
    user_id: str,
    document: dict[str, Any],
    app_state: dict[str, Any],
    user_state: dict[str, Any],
    events: list[Event] | None = None,
) -> Session:
    """The ADK session a chronicum's state ``document`` describes."""
    return Session(
        id=str(document["session_id"]),
        app_name=app_name,
        user_id=user_id,
        state=_merged(app_state, user_state, document["state"]),
        events=events or [],
        last_update_time=float(document["updated"]),
    )


def _state_deltas(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``state`` split into the app's, the user's and the session's (``temp:`` keys
    dropped), each JSON: a value that is not is kept as its text, as ADK's own
    services keep it."""
    deltas: dict[str, dict[str, Any]] = {"app": {}, "user": {}, "session": {}}
    for key, value in state.items():
        if key.startswith(State.APP_PREFIX):
            deltas["app"][key.removeprefix(State.APP_PREFIX)] = value
        elif key.startswith(State.USER_PREFIX):
            deltas["user"][key.removeprefix(State.USER_PREFIX)] = value
        elif not key.startswith(State.TEMP_PREFIX):
            deltas["session"][key] = value
    return to_jsonable_python(deltas, fallback=repr)  # type: ignore[no-any-return]


def _shared_changes(app_name: str, deltas: dict[str, dict[str, Any]]) -> list[StateChange]:
    changes = []
    if deltas["user"]:
        changes.append(
            StateChange(namespace=namespace(app_name), scope=StateScope.OWNER, set=deltas["user"])
        )
    if deltas["app"]:
        changes.append(
            StateChange(
                namespace=namespace(app_name), scope=StateScope.NAMESPACE, set=deltas["app"]
            )
        )
    return changes


def _merged(
    app_state: dict[str, Any], user_state: dict[str, Any], session_state: dict[str, Any]
) -> dict[str, Any]:
    merged = dict(session_state)
    merged.update({State.APP_PREFIX + k: v for k, v in app_state.items()})
    merged.update({State.USER_PREFIX + k: v for k, v in user_state.items()})
    return merged


def _is_session(document: dict[str, Any] | None, session_id: object) -> bool:
    return (
        document is not None and "state" in document and document.get("session_id") == (session_id)
    )
