"""``GET <prefix>/chronica/<id>/acta/stream/``: a chronicum's new acta as server-sent events.

One event per actum recorded after the stream starts, or after the actum named by
``Last-Event-ID`` (sent by a reconnecting ``EventSource``) or ``?after=``, filtered
like the window (the filters of ``chronica.validation.FOLLOW_PARAMETERS``): ``id:``
the actum's ID, ``data:`` its JSON. A comment every 15 seconds keeps proxies from
closing a quiet stream. Every check (signed in, the owner, the filters, the resume
point) is answered before a byte of the stream, by starting the follower in the
view, with the same answers as the other routes. A stream an agent's credential
opened ends once the credential is revoked or has expired: it is asked again every
heartbeat, whatever the stream sends.

Under ASGI (uvicorn, daphne) the stream is a coroutine on the server's event
loop, woken by ``services.afollow``, and ends when the client goes away. It holds no
thread: Django runs this sync view, and its middleware, in a thread of the request's
own (asgiref's thread-sensitive context), which would otherwise wait idle for as long
as the stream lasts; the stream lets it go as it starts. Under
WSGI it still works, but holds a worker thread for as long as the client stays
(and notices a client that left only at the next heartbeat): serve it with ASGI.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import AsyncGenerator, Iterable, Iterator
from typing import Any

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.db import DatabaseError, connections
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.decorators import action
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request

from .. import services
from ..conf import chronica_settings
from ..errors import ChronicumNotFound
from ..follow import ActumRedacted
from ..services import AgentIdentity, Follower
from ..validation.parameters import FOLLOW_PARAMETERS
from ..values import Actum
from .agents import chronicarius_for
from .inputs import arguments, names, owner_id
from .renderers import dumps
from .schema import _COMMON, _INVALID, CHRONICUM_ID, RETRY_AFTER, query_parameters
from .wire import actum_wire

__all__ = ["ActaStreamMixin", "event"]

LAST_EVENT_ID = "Last-Event-ID"

logger = logging.getLogger("chronica.api")


class _ErrorsAsJSON(BaseContentNegotiation):
    """The stream is text/event-stream whatever the client accepts (an EventSource
    sends ``Accept: text/event-stream``); what else this route answers, an error,
    is JSON like every other route's."""

    def select_parser(self, request: Request, parsers: Iterable[BaseParser]) -> BaseParser | None:
        return next(iter(parsers), None)

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        return JSONRenderer(), JSONRenderer.media_type


def event(actum: Actum) -> bytes:
    """One actum as one server-sent event: ``id:`` its ID, ``data:`` its JSON on one line;
    the redaction of an actum (``ActumRedacted``) as ``event: redacted`` and its JSON."""
    cached = _events_sent.get(actum.id)
    if cached is not None and cached[0] == actum:
        return cached[1]
    data = dumps(actum_wire(actum))
    if isinstance(actum, ActumRedacted):
        # An actum sent before was redacted: no id:, the stream's position stays.
        sent = f"event: redacted\ndata: {data}\n\n".encode()
    else:
        sent = f"id: {actum.id}\ndata: {data}\n\n".encode()
    # The followers of a chronicum share their reads, so a thousand streams send the
    # same actum: it is serialized once.
    _events_sent[actum.id] = (actum, sent)
    # (Under WSGI streams are threads: another may change the dict meanwhile.)
    with contextlib.suppress(RuntimeError, StopIteration):
        while len(_events_sent) > _EVENTS_KEPT:
            _events_sent.pop(next(iter(_events_sent)), None)
    return sent


_EVENTS_KEPT = 256
_events_sent: dict[str, tuple[Actum, bytes]] = {}


STREAM: dict[str, Any] = {
    "operation_id": "chronica_acta_stream",
    "summary": "New acta as they are recorded (server-sent events)",
    "description": "A `text/event-stream`: one event per actum recorded after the stream"
    " starts (or after the actum named by `Last-Event-ID` or `after`), filtered as the window"
    " is; `id:` is the actum's ID and `data:` its JSON, as in the window. When an actum"
    " recorded before is redacted meanwhile, an `event: redacted` (no `id:`) carries it as it"
    " is now. A comment"
    " line every 15 seconds keeps a quiet stream open. Every error is answered before the"
    " stream starts.",
    "parameters": [
        CHRONICUM_ID,
        *query_parameters(FOLLOW_PARAMETERS),
        OpenApiParameter(
            LAST_EVENT_ID,
            str,
            OpenApiParameter.HEADER,
            description="Sent by a reconnecting EventSource: resume after this actum. It wins"
            " over `after`, which the reconnection repeats from the first URL.",
        ),
        RETRY_AFTER,
    ],
    "responses": {
        (200, "text/event-stream"): OpenApiResponse(
            OpenApiTypes.STR, description="The stream, until the client goes away."
        ),
        400: _INVALID,
        **_COMMON,
    },
}


class ActaStreamMixin:
    """The stream action for ``ChronicumViewSet`` (``chronicum-acta-stream``)."""

    #: Seconds between two comment lines on a quiet stream.
    stream_heartbeat = 15.0

    @extend_schema(**STREAM)
    @action(
        detail=True,
        methods=["get"],
        url_path="acta/stream",
        url_name="acta-stream",
        content_negotiation_class=_ErrorsAsJSON,
        query_parameters={"stream": names(FOLLOW_PARAMETERS)},
    )
    def stream(self, request: Request, chronicum_id: str) -> StreamingHttpResponse:
        """New acta as server-sent events."""
        owner, follow = owner_id(request), arguments(request, FOLLOW_PARAMETERS)
        follow["after"] = request.headers.get(LAST_EVENT_ID) or follow.get("after") or None
        asgi = isinstance(getattr(request, "_request", request), ASGIRequest)
        # Every check answered now, while an error can still be a 404 or a 400.
        # Each actum's data as stored, never decoded: event() writes it in verbatim.
        follower = chronicarius_for(request, owner).afollow(
            owner,
            chronicum_id,
            **follow,
            max_bytes=chronica_settings.API_MAX_RESPONSE_BYTES,
            raw_data=True,
        )
        follower.start()
        # The stream outlives these checks by minutes or hours: the connection they
        # used goes back now rather than sit idle for the stream's life (the follower
        # reads through its own).
        for used in connections.all(initialized_only=True):
            if not used.in_atomic_block:
                used.close()
        # An agent's credential is asked again as the stream goes on: revoked or expired,
        # it ends the stream as it would refuse a new request.
        credential = request.auth.key_id if isinstance(request.auth, AgentIdentity) else None
        events = _events(follower, heartbeat=self.stream_heartbeat, credential=credential)
        response = StreamingHttpResponse(
            events if asgi else _blocking(events), content_type="text/event-stream"
        )
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"  # nginx: pass each event on at once
        return response


async def _events(
    follower: Follower, *, heartbeat: float, credential: str | None = None
) -> AsyncGenerator[bytes, None]:
    # The next actum is awaited in a task of its own, so that a heartbeat can go out
    # (and the credential be asked again) while it waits without cancelling the follower.
    pending: asyncio.Future[Actum] | None = None
    try:
        context = _without_request_thread()
        # The credential is asked in a context of its own: asgiref refuses a sync call
        # from a context whose own sync call (the follower's read) is under way.
        asking = context.copy()
        yield b": chronica stream\n\n"
        loop = asyncio.get_running_loop()
        sent = asked = loop.time()
        while True:
            if credential is not None and loop.time() >= asked + heartbeat:
                if not await loop.create_task(_credential_holds(credential), context=asking):
                    yield b": credential revoked or expired\n\n"
                    return
                asked = loop.time()
            if pending is None:
                pending = loop.create_task(anext(follower), context=context)
            wake = sent + heartbeat if credential is None else min(sent, asked) + heartbeat
            done, _ = await asyncio.wait({pending}, timeout=max(wake - loop.time(), 0))
            if not done:
                if loop.time() >= sent + heartbeat:
                    yield b": heartbeat\n\n"
                    sent = loop.time()
                continue
            try:
                actum = pending.result()
            except ChronicumNotFound:
                return  # deleted since the checks
            pending = None
            yield event(actum)
            sent = loop.time()
    finally:
        if pending is not None and not pending.done():
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending
        await follower.aclose()


async def _credential_holds(key_id: str) -> bool:
    """Whether the stream's credential is still valid; a database that cannot say now
    is asked again at the next heartbeat (the follower's reads wait for it too)."""
    return await sync_to_async(_asked)(key_id)


def _asked(key_id: str) -> bool:
    try:
        return services.credential_active(key_id)
    except DatabaseError:
        logger.warning("chronica API: a stream's credential could not be checked", exc_info=True)
        return True
    finally:
        # As at the end of a request: the connection goes unless CONN_MAX_AGE keeps it.
        for used in connections.all(initialized_only=True):
            if not used.in_atomic_block:
                used.close_if_unusable_or_obsolete()


def _without_request_thread() -> contextvars.Context:
    """End the thread Django's ASGI handler gave this request for its sync parts (the
    view, the middleware), done once the stream starts; and the context the follower
    runs in, outside the request's: its sync calls, if any (a store without an asyncio
    path), go to asgiref's one shared thread, not to a new thread of this request.
    Django's handler closes the response in the request's context at the end, on a
    thread made then and ended with the request."""
    from asgiref.sync import SyncToAsync

    request = SyncToAsync.thread_sensitive_context.get(None)
    if request is not None:
        executor = SyncToAsync.context_to_thread_executor.pop(request, None)
        if executor is not None:
            executor.shutdown(wait=False)
    context = contextvars.copy_context()
    context.run(SyncToAsync.thread_sensitive_context.set, None)  # type: ignore[arg-type]
    return context


def _blocking(events: AsyncGenerator[bytes, None]) -> Iterator[bytes]:
    """The stream for a WSGI server: the follower runs on an event loop of this
    thread, which ends (closing its connections) when the server closes the response."""
    with asyncio.Runner() as runner:
        try:
            while True:
                try:
                    yield runner.run(anext(events))
                except StopAsyncIteration:
                    return
        finally:
            runner.run(events.aclose())
