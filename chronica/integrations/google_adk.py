"""Google ADK sessions kept in chronica: ``ChronicaSessionService``.

``pip install "chronica[google-adk]"``, then give it to a ``Runner`` in place of ADK's
own ``InMemorySessionService``::

    runner = Runner(app_name="dinner", agent=concierge, session_service=ChronicaSessionService())

ADK's ``user_id`` is chronica's owner. A session is the chronicum
``chronicum_id(app_name, user_id, session_id)``, ``adk:<app>:<user>:<session>`` with
each part percent-escaped (all but letters, digits and ``-._~``): chronicum IDs are
global, and ADK lets two users each have a session of the same ID under one app, so
the app and the user are part of the ID; the owner check of chronica keeps each user
to their own.

Each event is one actum of it, recorded through ``chronica.services``: its kind from
the event's parts (text: message, thought parts alone: thought, a function call: tool
request, a function response: tool response, ``call_id`` the call's ID), under the
agent that wrote it (the user's turns under the person, ``actor_kind=human``),
``content`` the text people read and ``data`` the event as ADK serialises it. Partial
events are not stored. The session's state is the chronicum's state in the namespace
``adk:<app>``; ``user:`` state is the owner's state there and ``app:`` state the
namespace's, all changed in the same transaction as the event's append. ``temp:``
state is never stored.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import enum
import functools
import hashlib
import json
import operator
import threading
from collections.abc import Callable, Iterable
from typing import Any, Literal
from urllib.parse import quote

from asgiref.sync import sync_to_async
from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.platform import time as platform_time
from google.adk.platform import uuid as platform_uuid
from google.adk.sessions import _session_util
from google.adk.sessions.base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
)
from google.adk.sessions.session import Session
from google.adk.sessions.state import State
from google.genai import types
from pydantic import BaseModel

from .. import services
from ..errors import ChronicumExists, ChronicumNotFound, InvalidActum, StateConflict
from ..validation import RawJSON, check_identifier, loads_data, raw_data, uncollected
from ..values import ActorKind, Actum, ActumKind, NamespaceListing, StateChange, StateScope

__all__ = ["ChronicaSessionService", "actum_of", "chronicum_id", "decoded", "namespace"]

# Where the acta of a long session are read from when a timestamp filters them.
_PAGE = 1000
_STALE = (
    "The session has been modified in storage since it was loaded. "
    "Please reload the session before appending more events."
)


def chronicum_id(app_name: str, user_id: str, session_id: str) -> str:
    """The chronicum that holds the ADK session ``(app_name, user_id, session_id)``."""
    return "adk:" + ":".join(quote(part, safe="") for part in (app_name, user_id, session_id))


def namespace(app_name: str) -> str:
    """The state namespace of an ADK app: its sessions' state, user state and app state."""
    return "adk:" + quote(app_name, safe="")


class ChronicaSessionService(BaseSessionService):
    """An ADK ``BaseSessionService`` on chronica's configured store.

    Behaves as ADK's ``InMemorySessionService`` does, with the differences the README
    lists. ``stale_sessions`` says what an append through a stale ``Session`` object
    (one that others appended to since it was read) does:

    * ``"append"`` (the default, as ``InMemorySessionService``): it is not an error.
      The event is appended after theirs, its state delta applied over the state
      they left (key by key, as ``dict.update``), and the object gains its own event
      only; ``get_session`` reads everyone's. Concurrent runners never fail.
    * ``"raise"`` (as ADK's ``DatabaseSessionService``): ``StaleSessionError``, and
      nothing is written; reload the session with ``get_session`` and append again.

    An event appended twice (equal, same ID) is stored once and its state delta
    applied once.
    """

    def __init__(self, *, stale_sessions: Literal["append", "raise"] = "append") -> None:
        if stale_sessions not in ("append", "raise"):
            raise ValueError(f"stale_sessions must be 'append' or 'raise', not {stale_sessions!r}")
        self.stale_sessions = stale_sessions

    def __repr__(self) -> str:
        return f"<ChronicaSessionService stale_sessions={self.stale_sessions!r}>"

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        session_id = (session_id.strip() if session_id else None) or platform_uuid.new_uuid()
        deltas = _session_util.extract_json_safe_state_delta(state or {})
        now = platform_time.get_time()
        changes = [
            StateChange(
                namespace=namespace(app_name),
                set={
                    "session_id": session_id,
                    "state": deltas["session"],
                    "updated": now,
                    "last_event": "",
                },
            ),
            *_shared_changes(app_name, deltas),
        ]
        try:
            await services.aupdate_state(
                user_id, chronicum_id(app_name, user_id, session_id), changes, create=True
            )
        except ChronicumExists:
            raise AlreadyExistsError(f"Session with id {session_id} already exists.") from None
        view = await services.aget_state(user_id, namespace(app_name))
        return _session(
            app_name,
            user_id,
            {"session_id": session_id, "state": deltas["session"], "updated": now},
            view.namespace_state,
            view.owner_state,
        )

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
        cid = chronicum_id(app_name, user_id, session_id)
        read_acta = recent != 0 and after is None
        # The acta's data as the store holds it (RawJSON), decoded only for an event
        # not kept already (decoded()).
        reset = raw_data.set(True)
        try:
            view = await services.aget_state(
                user_id, namespace(app_name), cid, acta=read_acta, last_n=recent or 0
            )
        except InvalidActum:
            return None  # an app name or a user ID chronica cannot keep has no session
        finally:
            raw_data.reset(reset)
        document = view.chronicum_state
        if view.chronicum is None or not _is_session(document, session_id):
            return None
        assert document is not None
        if read_acta:
            events = [decoded(actum) for actum in view.acta or ()]
        elif recent == 0:
            events = []
        else:
            events = await _events_since(user_id, cid, after, recent)
        return _session(app_name, user_id, document, view.namespace_state, view.owner_state, events)

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        try:
            listing = await services.alist_namespace(namespace(app_name), owner_id=user_id)
        except InvalidActum:
            return ListSessionsResponse()
        with uncollected():  # thousands of sessions: no await in here
            return ListSessionsResponse(sessions=_listed(app_name, listing))

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        session_id = session_id.strip() if session_id else session_id
        # ADK: deleting a session that is not there does nothing.
        with contextlib.suppress(ChronicumNotFound, InvalidActum):
            await services.adelete_chronicum(user_id, chronicum_id(app_name, user_id, session_id))

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        try:
            view = await services.aget_state(user_id, namespace(app_name))
        except InvalidActum:
            return {}
        return view.owner_state

    async def append_event(self, session: Session, event: Event) -> Event:
        if event.partial:
            return event
        app_name, user_id = session.app_name, session.user_id
        data = event.model_dump(exclude_none=True, mode="json")
        delta = dict(data.get("actions", {}).get("state_delta", {}))
        stored_delta = {k: v for k, v in delta.items() if not k.startswith(State.TEMP_PREFIX)}
        if "actions" in data:
            data["actions"]["state_delta"] = stored_delta
        deltas = _session_util.extract_json_safe_state_delta(stored_delta)
        expect = {"session_id": session.id}
        if self.stale_sessions == "raise":
            expect["last_event"] = _marker(session)
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
        cid = chronicum_id(app_name, user_id, session.id)
        actum = actum_of(event, cid, user_id, data)
        try:
            recorded = await services.arecord(
                user_id, [actum], idempotency_key=_event_key(data), state=changes
            )
        except ChronicumNotFound:
            raise SessionNotFoundError(f"Session {session.id} not found.") from None
        except StateConflict:
            view = await services.aget_state(user_id, namespace(app_name), cid)
            if self.stale_sessions == "raise" and _is_session(view.chronicum_state, session.id):
                raise StaleSessionError(_STALE) from None
            raise SessionNotFoundError(f"Session {session.id} not found.") from None
        if recorded.replayed:
            return event  # ADK: an equal event appended again changes nothing
        await super().append_event(session=session, event=event)
        session.last_update_time = event.timestamp
        session._storage_update_marker = event.id
        return event


def _listed(app_name: str, listing: NamespaceListing) -> list[Session]:
    """The sessions of ``listing``, as ADK orders them: by last update, user, ID."""
    # The app's and each user's state, prefixed, once for all their sessions.
    shared: dict[str, dict[str, Any]] = {}
    found = []
    for chronicum, document in listing.chronica:
        session_id = document.get("session_id")
        if not _is_session(document, session_id):
            continue
        owner = chronicum.owner_id
        found.append((float(document["updated"]), owner, str(session_id), document))
    found.sort(key=_first_three)
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
            _built(
                session_id,
                app_name,
                owner,
                state,
                [],
                updated,
                document.get("last_event", ""),
            )
        )
    return sessions


_first_three = operator.itemgetter(0, 1, 2)


def _session(
    app_name: str,
    user_id: str,
    document: dict[str, Any],
    app_state: dict[str, Any],
    user_state: dict[str, Any],
    events: list[Event] | None = None,
) -> Session:
    """The ADK session a chronicum's state ``document`` describes."""
    return _built(
        str(document["session_id"]),
        app_name,
        user_id,
        _merged(app_state, user_state, document["state"]),
        events or [],
        float(document["updated"]),
        # The last event stored when it was read: what stale_sessions="raise" compares.
        document.get("last_event", ""),
    )


_SESSION_FIELDS = ("id", "app_name", "user_id", "state", "events", "last_update_time")
_ALL_SET = set(_SESSION_FIELDS)
_new_model = object.__new__
# BaseModel's slots, set through their descriptors (a third faster than
# object.__setattr__, which looks the name up on the type each time).
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def _built(
    session_id: str,
    app_name: str,
    user_id: str,
    state: dict[str, Any],
    events: list[Event],
    updated: float,
    marker: str,
) -> Session:
    """A ``Session`` built without pydantic's validation or ``model_construct``: every
    value is already of its type (the IDs are strings, the state a dict of JSON, the
    events decoded), and both were most of a long ``list_sessions`` (BENCHMARKS.md,
    issue 24). The object is the one ``Session(...)`` makes, every field set (a test
    compares them)."""
    session = _new_model(Session)
    _set_dict(
        session,
        {
            "id": session_id,
            "app_name": app_name,
            "user_id": user_id,
            "state": state,
            "events": events,
            "last_update_time": updated,
        },
    )
    _set_fields_set(session, _ALL_SET.copy())
    _set_extra(session, None)
    _set_private(session, {"_storage_update_marker": marker})
    return session


if tuple(Session.model_fields) != _SESSION_FIELDS or set(Session.__private_attributes__) != {
    "_storage_update_marker"
}:
    # _built() sets every field by name: a google-adk whose Session has others needs it
    # taught them, or sessions would lack them.
    raise RuntimeError("chronica's _built() does not set every field of ADK's Session")


def _marker(session: Session) -> str:
    if session._storage_update_marker is not None:
        return session._storage_update_marker
    # A Session object this service did not hand out: its own last event.
    return session.events[-1].id if session.events else ""


# An event's decoding is most of a read: google-genai's models check every field of
# every part (30 to 150 µs an event, by the machine's load). Acta never change, so each
# process keeps the events it decoded last, each as a function that makes a new copy
# of it (a quarter of the decoding's time): no caller can change a kept event through
# what it was given (BENCHMARKS.md, issue 24). Each is kept with the data it was
# decoded from, the JSON text as the store held it where the actum brought that (a
# RawJSON: the session reads), which is all a kept event needs: its text compared, not
# decoded.
_DECODED: collections.OrderedDict[tuple[str, str], tuple[Any, str | None, Callable[[], Event]]] = (
    collections.OrderedDict()
)
_DECODED_LOCK = threading.Lock()
DECODED_EVENTS = 4096


def decoded(actum: Actum) -> Event:
    """The event ``actum`` holds, a new object for every call. ``actum.data`` is the
    event as a JSON object, or a ``RawJSON`` of it (as stores read it under
    ``chronica.validation.raw_data``)."""
    key = (actum.chronicum_id, actum.id)
    data = actum.data
    with _DECODED_LOCK:
        found = _DECODED.get(key)
        if found is not None:
            _DECODED.move_to_end(key)
    text = None
    if isinstance(data, RawJSON):
        text = data.stored
        if found is not None and found[1] == text:
            return found[2]()
        data = loads_data(text)
    elif found is not None and found[0] == data:
        return found[2]()
    event = Event.model_validate(data)
    make: Callable[[], Event] = _maker(event)  # type: ignore[assignment]
    with _DECODED_LOCK:
        _DECODED[key] = (data, text, make)
        while len(_DECODED) > DECODED_EVENTS:
            _DECODED.popitem(last=False)
    return make()


_ATOMIC = frozenset({type(None), bool, int, float, str, bytes})


def _maker(value: Any) -> Callable[[], Any] | None:
    """A function that makes a deep copy of ``value`` (a decoded event or a part of
    one) each time it is called, equal to ``model_copy(deep=True)``'s; ``None`` where
    ``value`` cannot change (a string, a number, a member of an enum), which copies
    keep as ``copy.deepcopy`` does. Which fields of which model hold something to
    copy is found once, here, not at each copy; a decoded event is a tree (no object
    in it twice, no cycle), so no memo is needed. The templates it keeps are the
    kept event's own, which nothing hands out. The copies are most of a session read
    served from kept events (about 5 models an event): the functions are made for
    the common shapes (one item to copy in a container, a model without extra or
    private attributes, one without anything to copy in it)."""
    kind = type(value)
    if kind in _ATOMIC or isinstance(value, enum.Enum):
        return None
    if kind is list or kind is dict:
        keys = range(len(value)) if kind is list else value.keys()
        inner = [(k, m) for k in keys if (m := _maker(value[k])) is not None]
        if not inner:
            return value.copy  # type: ignore[no-any-return]
        template = value
        if len(inner) == 1:
            [(only, make_only)] = inner

            def one_inside() -> Any:
                made = template.copy()
                made[only] = make_only()
                return made

            return one_inside

        def container() -> Any:
            made = template.copy()
            for k, m in inner:
                made[k] = m()
            return made

        return container
    if isinstance(value, BaseModel):
        return _model_maker(value)
    return functools.partial(copy.deepcopy, value)


def _model_maker(value: BaseModel) -> Callable[[], Any]:
    """``_maker`` of a pydantic model."""
    kind = type(value)
    fields = value.__dict__
    nested = [(name, m) for name, item in fields.items() if (m := _maker(item)) is not None]
    fields_set = value.__pydantic_fields_set__
    extra = value.__pydantic_extra__
    private = value.__pydantic_private__
    if extra is None and private is None:
        if not nested:

            def flat() -> Any:
                clone = _new_model(kind)
                _set_dict(clone, fields.copy())
                _set_extra(clone, None)
                _set_fields_set(clone, fields_set.copy())
                _set_private(clone, None)
                return clone

            return flat

        def plain() -> Any:
            clone = _new_model(kind)
            made = fields.copy()
            for name, m in nested:
                made[name] = m()
            _set_dict(clone, made)
            _set_extra(clone, None)
            _set_fields_set(clone, fields_set.copy())
            _set_private(clone, None)
            return clone

        return plain
    extra_maker = None if extra is None else _maker(extra)
    private_maker = None if private is None else _maker(private)

    def model() -> Any:
        clone = _new_model(kind)
        made = fields.copy()
        for name, m in nested:
            made[name] = m()
        _set_dict(clone, made)
        _set_extra(clone, None if extra_maker is None else extra_maker())
        _set_fields_set(clone, fields_set.copy())
        _set_private(clone, None if private_maker is None else private_maker())
        return clone

    return model


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


def _event_key(data: dict[str, Any]) -> str:
    """The idempotency key of an event: equal events (ID and every field) share it."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "adk-event:" + hashlib.sha256(text.encode()).hexdigest()


async def _events_since(
    user_id: str, cid: str, after: float | None, recent: int | None
) -> list[Event]:
    """The events with a timestamp at or after ``after``, the last ``recent`` of them
    (the filter first, then the limit, as ADK's database service does), read back a
    page at a time."""
    found: list[Event] = []
    before = None
    while True:
        try:
            # In a thread, as the rest of the read: inside the caller's transaction.
            page = await sync_to_async(_raw_acta)(user_id, cid, last_n=_PAGE, before=before)
        except ChronicumNotFound:
            return []
        for actum in reversed(page):
            event = decoded(actum)
            if after is None or event.timestamp >= after:
                found.append(event)
        if len(page) < _PAGE or (recent is not None and len(found) >= recent):
            break
        before = page[0].id
    found.reverse()
    return found[-recent:] if recent else found


def _raw_acta(user_id: str, cid: str, *, last_n: int, before: str | None) -> list[Actum]:
    """``services.get_acta``, the data as the store holds it (see ``get_session``)."""
    reset = raw_data.set(True)
    try:
        return services.get_acta(user_id, cid, last_n=last_n, before=before)
    finally:
        raw_data.reset(reset)


# -- one event, one actum ---------------------------------------------------------------


def actum_of(event: Event, chronicum: str, user_id: str, data: dict[str, Any]) -> Actum:
    """The actum that holds ``event`` (``data``, its serialised form) in ``chronicum``.

    A function call makes a tool request and a function response a tool response
    (``call_id`` the first call's ID); thought parts alone make a thought; anything
    else a message. The user's turns are ``user_id``'s, as a human; the rest the
    authoring agent's.
    """
    parts = list(event.content.parts or []) if event.content else []
    calls = [p.function_call for p in parts if p.function_call]
    responses = [p.function_response for p in parts if p.function_response]
    texts = [p.text for p in parts if p.text and not p.thought]
    thoughts = [p.text for p in parts if p.text and p.thought]
    human = event.author == "user"
    actor = _identifier(user_id if human else event.author, "user" if human else "agent")
    actor_kind = ActorKind.HUMAN if human else ActorKind.AGENT
    call_id = ""
    if calls:
        kind, call_id = ActumKind.TOOL_REQUEST, calls[0].id or ""
        text = "\n".join(f"{c.name}({json.dumps(c.args or {}, default=str)})" for c in calls)
    elif responses:
        kind, call_id = ActumKind.TOOL_RESPONSE, responses[0].id or ""
        text = "\n".join(
            f"{r.name} -> {json.dumps(r.response or {}, default=str)}" for r in responses
        )
    elif thoughts and not texts:
        kind, text = ActumKind.THOUGHT, "\n".join(thoughts)
    else:
        kind, text = ActumKind.MESSAGE, "\n".join(texts) or _summary(event, parts)
    return Actum(
        chronicum_id=chronicum,
        kind=kind,
        actor_kind=actor_kind,
        actor=actor,
        content=text,
        call_id=_identifier(call_id, ""),
        data=data,
    )


def _summary(event: Event, parts: Iterable[types.Part]) -> str:
    """Words for an event without text: what it carries."""
    said = []
    if event.actions.transfer_to_agent:
        said.append(f"transfer to {event.actions.transfer_to_agent}")
    if event.actions.escalate:
        said.append("escalate")
    if event.actions.state_delta:
        said.append("state: " + ", ".join(sorted(event.actions.state_delta)))
    kinds = sorted({name for part in parts for name, value in part if value is not None})
    if kinds:
        said.append("parts: " + ", ".join(kinds))
    return f"({'; '.join(said) or 'event with no content'})"


def _identifier(value: str, fallback: str) -> str:
    """``value`` if chronica takes it as an actor or a call ID, else ``fallback``."""
    try:
        check_identifier("actor", value)
    except InvalidActum:
        return fallback
    return value or fallback
