"""chronica.api at the level of the protocol: requests as servers hand them to Django.

The test clients cannot send a header twice or a body without Content-Length.
These tests call Django's own ASGI and WSGI handlers with the scope and the
environ that uvicorn and gunicorn build, so what is tested is what Django
really receives.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.core.asgi import get_asgi_application
from django.core.wsgi import get_wsgi_application
from django.db import connections

from .. import scenario
from ..scenario import CHRONICUM
from .test_api import body

ACTA = f"/api/chronica/{CHRONICUM}/acta/"
ARDIAN = b"Basic " + base64.b64encode(b"ardian:ardian-password")
REPLY = json.dumps(body(scenario.booking_reply())).encode()


class Answer:
    def __init__(self, status: int, headers: dict[str, str], content: bytes) -> None:
        self.status_code, self.headers, self.content = status, headers, content

    def json(self) -> Any:
        return json.loads(self.content)


async def asgi(
    method: str,
    path: str,
    headers: list[tuple[bytes, bytes]],
    body: bytes = b"",
    *,
    chunked: bool = False,
) -> Answer:
    """One request through Django's ASGI handler, as uvicorn passes it on. A chunked
    body comes in three parts and with no Content-Length, as the client sent none."""
    if chunked:
        headers = [*headers, (b"transfer-encoding", b"chunked")]
        third = len(body) // 3 + 1
        chunks = [body[i : i + third] for i in range(0, len(body), third)]
    else:
        headers = [*headers, (b"content-length", str(len(body)).encode())]
        chunks = [body]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"testserver"), (b"authorization", ARDIAN), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    messages = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks)
    ]
    sent: list[dict] = []

    async def receive() -> dict:
        if messages:
            return messages.pop(0)
        await asyncio.Event().wait()  # the client stays connected
        raise AssertionError("unreachable")

    async def send(message: dict) -> None:
        sent.append(message)

    await get_asgi_application()(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    content = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    names = {k.decode("latin-1"): v.decode("latin-1") for k, v in start["headers"]}
    return Answer(start["status"], names, content)


def wsgi(method: str, path: str, environ: dict[str, Any], body: bytes = b"") -> Answer:
    """One request through Django's WSGI handler, with ``environ`` as the server built it."""
    base = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "testserver",
        "HTTP_AUTHORIZATION": ARDIAN.decode(),
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": io.StringIO(),
        "wsgi.url_scheme": "http",
        "wsgi.version": (1, 0),
        "wsgi.multithread": False,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    started: list[Any] = []
    content = b"".join(
        get_wsgi_application()({**base, **environ}, lambda s, h, *_: started.append((s, h)))
    )
    status, headers = started[0]
    return Answer(int(status.split()[0]), dict(headers), content)


@pytest.fixture(autouse=True)
async def close_executor_connections():
    yield
    # Sync views ran on asgiref's executor thread: close its connection, or the
    # test database cannot be flushed and dropped.
    await sync_to_async(connections.close_all)()


pytestmark = pytest.mark.django_db(transaction=True)


async def window() -> list[dict]:
    answer = await asgi("GET", ACTA, [])
    assert answer.status_code in (200, 404)
    return answer.json() if answer.status_code == 200 else []


class TestIdempotencyKeyHeader:
    async def test_sent_twice_is_refused(self, ardian):
        # Django's ASGI handler joins the two values with a comma.
        headers = [
            (b"content-type", b"application/json"),
            (b"idempotency-key", b"booking-reply-1"),
            (b"idempotency-key", b"booking-reply-2"),
        ]
        answer = await asgi("POST", ACTA, headers, REPLY)
        assert answer.status_code == 400
        assert "sent once" in answer.json()["detail"]
        assert await window() == []

    async def test_utf8_bytes_are_refused(self, ardian):
        headers = [
            (b"content-type", b"application/json"),
            (b"idempotency-key", "ключ-🍷".encode()),
        ]
        answer = await asgi("POST", ACTA, headers, REPLY)
        assert answer.status_code == 400
        assert "must be ASCII" in answer.json()["detail"]
        assert await window() == []

    async def test_one_ascii_key_replays(self, ardian):
        headers = [
            (b"content-type", b"application/json"),
            (b"idempotency-key", b"booking-reply-1"),
        ]
        first = await asgi("POST", ACTA, headers, REPLY)
        again = await asgi("POST", ACTA, headers, REPLY)
        assert (first.status_code, again.status_code) == (201, 200)
        assert again.headers["Idempotent-Replayed"] == "true"
        assert await window() == [first.json()]

    def test_sent_twice_through_wsgi_is_refused(self, ardian):
        # gunicorn joins repeated headers with "," before Django sees them.
        environ = {
            "CONTENT_TYPE": "application/json",
            "CONTENT_LENGTH": str(len(REPLY)),
            "HTTP_IDEMPOTENCY_KEY": "booking-reply-1,booking-reply-2",
        }
        answer = wsgi("POST", ACTA, environ, REPLY)
        assert answer.status_code == 400
        assert "sent once" in answer.json()["detail"]


class TestChunkedBody:
    """A body sent in chunks has no Content-Length. Django reads bodies by their
    length, so it would be read as empty and answered "missing field(s)"; the
    client is told instead to send the length."""

    async def test_through_asgi_is_a_411(self, ardian):
        headers = [(b"content-type", b"application/json")]
        answer = await asgi("POST", ACTA, headers, REPLY, chunked=True)
        assert answer.status_code == 411
        assert "Content-Length" in answer.json()["detail"]
        assert await window() == []

    def test_through_wsgi_is_a_411(self, ardian):
        # As gunicorn passes a chunked request: no CONTENT_LENGTH, and an input
        # it has already de-chunked.
        environ = {
            "CONTENT_TYPE": "application/json",
            "HTTP_TRANSFER_ENCODING": "chunked",
            "wsgi.input_terminated": True,
        }
        answer = wsgi("POST", ACTA, environ, REPLY)
        assert answer.status_code == 411
        assert "Content-Length" in answer.json()["detail"]

    async def test_the_same_body_with_its_length_is_recorded(self, ardian):
        headers = [(b"content-type", b"application/json")]
        answer = await asgi("POST", ACTA, headers, REPLY)
        assert answer.status_code == 201
        assert await window() == [answer.json()]

    async def test_no_body_at_all_misses_every_field(self, ardian):
        answer = await asgi("POST", ACTA, [(b"content-type", b"application/json")])
        assert answer.status_code == 400
        assert "missing field(s)" in answer.json()["detail"]
