"""``GET <prefix>/chronica/<id>/acta/stream/``: a chronicum's new acta as server-sent events.

One event per actum recorded after the stream starts, or after the actum named by
``Last-Event-ID`` (sent by a reconnecting ``EventSource``) or ``?after=``, filtered
like the window (the filters of ``chronica.validation.FOLLOW_PARAMETERS``): ``id:``
the actum's ID, ``data:`` its JSON. A comment every 15 seconds keeps proxies from
closing a quiet stream. Every check (signed in, the owner, the filters, the resume
point) is answered before a byte of the stream, by starting the follower in the
view, with the same answers as the other routes.

Under ASGI (uvicorn, daphne) the stream is a coroutine on the server's event
loop, woken by ``services.afollow``, and ends when the client goes away. Under
WSGI it still works, but holds a worker thread for as long as the client stays
(and notices a client that left only at the next heartbeat): serve it with ASGI.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, Iterable, Iterator
from typing import Any

from django.core.handlers.asgi import ASGIRequest
from django.db import connections
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.decorators import action
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request

from ..errors import ChronicumNotFound
from ..services import Follower
from ..validation import FOLLOW_PARAMETERS
from ..values import Actum
from .agents import chronicarius_for
from .errors import chronica_errors
from .inputs import arguments, names, owner_id
from .schema import _COMMON, _INVALID, CHRONICUM_ID, RETRY_AFTER, query_parameters
from .serializers import ActumSerializer

__all__ = ["ActaStreamMixin", "event"]

LAST_EVENT_ID = "Last-Event-ID"


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
    """One actum as one server-sent event: ``id:`` its ID, ``data:`` its JSON on one line."""
    data = json.dumps(ActumSerializer(actum).data, ensure_ascii=False, separators=(",", ":"))
    return f"id: {actum.id}\ndata: {data}\n\n".encode()


STREAM: dict[str, Any] = {
    "operation_id": "chronica_acta_stream",
    "summary": "New acta as they are recorded (server-sent events)",
    "description": "A `text/event-stream`: one event per actum recorded after the stream"
    " starts (or after the actum named by `Last-Event-ID` or `after`), filtered as the window"
    " is; `id:` is the actum's ID and `data:` its JSON, as in the window. A comment"
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
        with chronica_errors():
            # Every check answered now, while an error can still be a 404 or a 400.
            follower = (
                chronicarius_for(request, owner).afollow(owner, chronicum_id, **follow).start()
            )
        # The stream outlives these checks by minutes or hours: the connection they
        # used goes back now rather than sit idle for the stream's life (the follower
        # reads through its own).
        for used in connections.all(initialized_only=True):
            if not used.in_atomic_block:
                used.close()
        events = _events(follower, heartbeat=self.stream_heartbeat)
        asgi = isinstance(getattr(request, "_request", request), ASGIRequest)
        response = StreamingHttpResponse(
            events if asgi else _blocking(events), content_type="text/event-stream"
        )
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"  # nginx: pass each event on at once
        return response


async def _events(follower: Follower, *, heartbeat: float) -> AsyncGenerator[bytes, None]:
    # The next actum is awaited in a task of its own, so that a heartbeat can go out
    # while it waits without cancelling the follower.
    pending: asyncio.Future[Actum] | None = None
    try:
        yield b": chronica stream\n\n"
        while True:
            if pending is None:
                pending = asyncio.ensure_future(anext(follower))
            done, _ = await asyncio.wait({pending}, timeout=heartbeat)
            if not done:
                yield b": heartbeat\n\n"
                continue
            try:
                actum = pending.result()
            except ChronicumNotFound:
                return  # deleted since the checks
            pending = None
            yield event(actum)
    finally:
        if pending is not None and not pending.done():
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending
        await follower.aclose()


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
