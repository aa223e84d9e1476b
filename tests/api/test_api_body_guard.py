"""``chronica.api.asgi.BodyGuard``: bodies refused by their headers, never read."""

from __future__ import annotations

import asyncio
import json

import pytest
from django.test import override_settings

from chronica.api.asgi import BodyGuard


async def _app(scope, receive, send):
    await receive()  # the application reads the body
    await send({"type": "http.response.start", "status": 201, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


def call(path: str, headers: dict[str, str], method: str = "POST") -> tuple[int, dict, bool]:
    """(status, JSON body, whether the body was read)."""
    read = []
    sent: list[dict] = []

    async def receive():
        read.append(True)
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
    }
    asyncio.run(BodyGuard(_app, paths=("/api/",))(scope, receive, send))
    body = sent[1]["body"]
    return sent[0]["status"], (json.loads(body) if body else {}), bool(read)


GIB = str(2**30)


@pytest.fixture(autouse=True)
def _limit():
    with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=2_621_440):
        yield


class TestBodyGuard:
    def test_a_body_over_the_limit_is_413_unread(self):
        status, body, read = call(
            "/api/chronica/x/acta/", {"Content-Length": GIB, "Authorization": "Token k"}
        )
        assert (status, read) == (413, False)
        assert "DATA_UPLOAD_MAX_MEMORY_SIZE" in body["detail"]

    def test_an_anonymous_body_is_401_unread(self):
        status, body, read = call("/api/chronica/x/acta/", {"Content-Length": "300"})
        assert (status, read) == (401, False)
        assert body == {"detail": "Authentication credentials were not provided."}

    def test_an_anonymous_huge_body_is_refused_unread(self):
        status, _, read = call("/api/chronica/x/acta/", {"Content-Length": GIB})
        assert status in (401, 413)
        assert not read

    def test_a_chunked_body_is_411_unread(self):
        status, _, read = call(
            "/api/chronica/x/acta/", {"Transfer-Encoding": "chunked", "Authorization": "Token k"}
        )
        assert (status, read) == (411, False)

    @pytest.mark.parametrize(
        "headers",
        [
            {"Content-Length": "300", "Authorization": "Token k"},
            {"Content-Length": "300", "Cookie": "csrftoken=a; sessionid=b"},
            {},
        ],
        ids=["token", "session", "no-body"],
    )
    def test_a_request_with_credentials_or_no_body_passes(self, headers):
        status, _, read = call("/api/chronica/x/acta/", headers)
        assert (status, read) == (201, True)

    def test_other_paths_pass(self):
        status, _, read = call("/admin/login/", {"Content-Length": "300"})
        assert (status, read) == (201, True)
