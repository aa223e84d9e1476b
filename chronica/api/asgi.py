"""ASGI wrappers for a project serving chronica's API: ``BodyGuard`` refuses a request
body before a byte of it is read, and gives up on one that never comes;
``RequestQueue`` lets a burst of requests wait its turn instead of taking a thread and
a database connection each.

``BodyGuard``:

Django's ASGI handler reads the whole body (spooling it to disk past 2.5 MB) before
any view or middleware runs, so a 1 GB body was written to disk only to be refused
with 413, and a body with made-up credentials only to be refused with 401. Wrap the
project's ASGI application::

    application = BodyGuard(get_asgi_application(), paths=("/api/",))

and under ``paths`` a request whose ``Content-Length`` is over
``DATA_UPLOAD_MAX_MEMORY_SIZE`` is answered 413, one that sends a body in chunks
(no ``Content-Length``) 411, and one that carries a body without valid credentials
401: each in JSON, at once, the body unread. Credentials are judged as chronica's
API judges them (an agent's credential, then the project's
``DEFAULT_AUTHENTICATION_CLASSES``, the session of a cookie included), from the
headers alone, in a few threads of the guard's own. A body that is not all there
``body_timeout`` seconds after its headers is answered 408 and the connection
closed: the server (uvicorn) waits for a body as long as its client sends it.
Anything else passes to the application unchanged.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import time
import weakref
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["BodyGuard", "RequestQueue"]

logger = logging.getLogger("chronica.api")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Refusal = tuple[int, str, list[tuple[bytes, bytes]]]

#: Threads that judge credentials (each with at most one database connection).
CHECKS = 4
_checks = ThreadPoolExecutor(CHECKS, thread_name_prefix="chronica-bodyguard")


class BodyGuard:
    """An ASGI wrapper that judges a request body by its headers alone, and bounds the
    time it takes to arrive (see the module)."""

    def __init__(
        self, app: ASGIApp, *, paths: Sequence[str] = ("/api/",), body_timeout: float = 30.0
    ) -> None:
        self.app = app
        self.paths = tuple(paths)
        self.body_timeout = body_timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith(self.paths):
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is None and _has_body(scope):
            refusal = await self._credentials_refusal(scope)
        if refusal is not None:
            await _answer(send, *refusal)
            return
        await self._timed(scope, receive, send)

    def refusal(self, scope: Scope) -> Refusal | None:
        """What the headers alone refuse: a body too large, chunked, or malformed."""
        from django.conf import settings

        headers = _headers(scope)
        length_header = headers.get(b"content-length")
        if length_header is None:
            if b"transfer-encoding" in headers:
                return 411, "send the body with a Content-Length header", []
            return None
        try:
            length = int(length_header)
        except ValueError:
            return 400, "Content-Length is not a number", []
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None and length > limit:
            return (
                413,
                f"the request body is larger than DATA_UPLOAD_MAX_MEMORY_SIZE ({limit} bytes)",
                [],
            )
        return None

    async def _credentials_refusal(self, scope: Scope) -> Refusal | None:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(_checks, _credentials_refusal, scope)

    async def _timed(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The application, with its body due ``body_timeout`` seconds after the headers:
        past that the application reads a disconnect, and the client gets a 408. Once
        the body is in, the application's wait for a disconnect is not timed."""
        deadline = time.monotonic() + self.body_timeout
        late = started = body_read = False

        async def timed_receive() -> Message:
            nonlocal late, body_read
            if body_read:
                return await receive()
            if late:
                return {"type": "http.disconnect"}
            try:
                message = await asyncio.wait_for(receive(), max(deadline - time.monotonic(), 0))
            except TimeoutError:
                late = True
                return {"type": "http.disconnect"}
            body_read = message["type"] != "http.request" or not message.get("more_body")
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        await self.app(scope, timed_receive, watched_send)
        if late and not started:
            await _answer(
                send, 408, f"the request body did not arrive within {self.body_timeout:g} s", []
            )


class RequestQueue:
    """An ASGI wrapper: at most ``concurrency`` requests of this process in Django at a
    time, the others waiting their turn, in order::

        application = RequestQueue(get_asgi_application(), concurrency=16)

    Django runs each request's sync part (the middleware, the view) in a thread of the
    request's own, with a database connection of that thread's own. A burst (a thousand
    streams opened at once, a listing storm) took a thousand threads and as many
    connections as the database would give, and the rest failed with 503. Queued, a
    request is admitted once its body is in (a slow body waits outside the queue) and
    leaves when its answer starts: a stream's, when it starts streaming, for it holds
    no thread then. chronica's views return their database connection as their answer
    starts (``CONN_MAX_AGE`` permitting), so that one slow to go out holds none.

    A waiting request holds a socket and a coroutine, nothing else; it waits as long as
    the requests before it take (the server's and the database's timeouts bound those).
    """

    def __init__(
        self, app: ASGIApp, *, concurrency: int = 16, paths: Sequence[str] | None = None
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {concurrency!r}")
        self.app = app
        self.concurrency = concurrency
        self.paths = None if paths is None else tuple(paths)
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]
        self._slots = weakref.WeakKeyDictionary()
        #: Requests waiting for their turn, and in Django, now.
        self.waiting = self.running = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if scope["type"] != "http" or (self.paths is not None and not path.startswith(self.paths)):
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        slots = self._slots.get(loop)
        if slots is None:
            slots = self._slots[loop] = asyncio.Semaphore(self.concurrency)
        admitted = holding = False

        async def queued_receive() -> Message:
            nonlocal admitted, holding
            message = await receive()
            body_done = message["type"] == "http.request" and not message.get("more_body")
            if body_done and not admitted:
                admitted = True
                self.waiting += 1
                try:
                    await slots.acquire()
                finally:
                    self.waiting -= 1
                holding = True
                self.running += 1
            return message

        def leave() -> None:
            nonlocal holding
            if holding:
                holding = False
                self.running -= 1
                slots.release()

        async def releasing_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                leave()
            await send(message)

        try:
            await self.app(scope, queued_receive, releasing_send)
        finally:
            leave()


def _headers(scope: Scope) -> dict[bytes, bytes]:
    return {bytes(name).lower(): bytes(value) for name, value in scope.get("headers", ())}


def _has_body(scope: Scope) -> bool:
    length = _headers(scope).get(b"content-length", b"0")
    return length.strip() not in (b"", b"0")


def _credentials_refusal(scope: Scope) -> Refusal | None:
    """A 401 unless the request's headers sign it in, as chronica's API judges them: a
    request built from the headers and no body, authenticated by the viewsets'
    authentication classes, with their messages and challenges. An error that is not
    about the credentials (a database that fails) refuses nothing: the application
    answers it."""
    from django.db import close_old_connections
    from rest_framework.exceptions import APIException, NotAuthenticated, PermissionDenied
    from rest_framework.request import Request

    from .views import BaseViewSet

    view = BaseViewSet()
    try:
        request = Request(_request_of(scope), authenticators=view.get_authenticators())
        try:
            signed_in = bool(getattr(request.user, "is_authenticated", False))
        except PermissionDenied:
            return None  # signed in by a session, refused by CSRF: the view says so
        except APIException as exc:  # AuthenticationFailed: unknown, expired, revoked
            return _unauthorized(str(exc.detail), view.get_authenticate_header(request))
        if signed_in:
            return None
        detail = str(NotAuthenticated.default_detail)
        return _unauthorized(detail, view.get_authenticate_header(request))
    except Exception:
        logger.warning("chronica API: could not judge a request's credentials", exc_info=True)
        return None
    finally:
        close_old_connections()


def _unauthorized(detail: str, challenge: str) -> Refusal:
    # As chronica's views answer: 401 with the challenges the project's classes make,
    # 403 where none can make one (DRF's rule).
    if not challenge:
        return 403, detail, []
    return 401, detail, [(b"www-authenticate", challenge.encode("latin-1"))]


def _request_of(scope: Scope) -> Any:
    """The Django request of ``scope`` with an empty body, its session and user as
    Django's middleware would set them."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib import auth
    from django.core.handlers.asgi import ASGIRequest
    from django.utils.functional import SimpleLazyObject

    request = ASGIRequest(scope, io.BytesIO())
    if "django.contrib.sessions" in settings.INSTALLED_APPS:
        engine = import_module(settings.SESSION_ENGINE)
        request.session = engine.SessionStore(request.COOKIES.get(settings.SESSION_COOKIE_NAME))
        if "django.contrib.auth" in settings.INSTALLED_APPS:
            request.user = SimpleLazyObject(lambda: auth.get_user(request))  # type: ignore[assignment]
    return request


async def _answer(send: Send, status: int, detail: str, extra: list[tuple[bytes, bytes]]) -> None:
    body = json.dumps({"detail": detail}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
