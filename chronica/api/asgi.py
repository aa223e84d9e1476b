"""``BodyGuard``: refuse a request body before a byte of it is read.

Django's ASGI handler reads the whole body (spooling it to disk past 2.5 MB) before
any view or middleware runs, so a 1 GB body was written to disk only to be refused
with 413, and an anonymous one only to be refused with 401. Wrap the project's ASGI
application::

    application = BodyGuard(get_asgi_application(), paths=("/api/",))

and under ``paths`` a request whose ``Content-Length`` is over
``DATA_UPLOAD_MAX_MEMORY_SIZE`` is answered 413, one that sends a body in chunks
(no ``Content-Length``) 411, and one that carries a body but no credentials (no
``Authorization`` header, no session cookie) 401: each in JSON, at once, the body
unread. Anything else passes to the application unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

__all__ = ["BodyGuard"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyGuard:
    """An ASGI wrapper that judges a request body by its headers alone (see the module)."""

    def __init__(self, app: ASGIApp, *, paths: Sequence[str] = ("/api/",)) -> None:
        self.app = app
        self.paths = tuple(paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and str(scope.get("path", "")).startswith(self.paths):
            refusal = self.refusal(scope)
            if refusal is not None:
                await _answer(send, *refusal)
                return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> tuple[int, str, list[tuple[bytes, bytes]]] | None:
        from django.conf import settings

        headers: dict[bytes, bytes] = {}
        for name, value in scope.get("headers", ()):
            headers[bytes(name).lower()] = bytes(value)
        length_header = headers.get(b"content-length")
        chunked = b"transfer-encoding" in headers
        if length_header is None:
            if chunked:
                return 411, "send the body with a Content-Length header", []
            return None
        try:
            length = int(length_header)
        except ValueError:
            return 400, "Content-Length is not a number", []
        if length <= 0:
            return None
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None and length > limit:
            return (
                413,
                f"the request body is larger than DATA_UPLOAD_MAX_MEMORY_SIZE ({limit} bytes)",
                [],
            )
        cookie = headers.get(b"cookie", b"").decode("latin-1")
        session = settings.SESSION_COOKIE_NAME + "="
        if b"authorization" not in headers and session not in cookie:
            return (
                401,
                "Authentication credentials were not provided.",
                [(b"www-authenticate", b"Token")],
            )
        return None


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
