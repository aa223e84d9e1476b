"""``chronica.api.asgi.BodyGuard``: bodies refused by their headers, never read; a body
that does not arrive in time, given up on."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest
from django.test import override_settings

from chronica.api.asgi import BodyGuard


async def _app(scope, receive, send):
    if (await receive())["type"] == "http.disconnect":
        return  # as Django's handler does: the client went away, nothing to answer
    await send({"type": "http.response.start", "status": 201, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


def call(
    path: str, headers: dict[str, str], method: str = "POST", *, guard=None, receive=None
) -> tuple[int, dict, bool]:
    """(status, JSON body, whether the body was read)."""
    read = []
    sent: list[dict] = []

    async def body():
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
    guard = guard or BodyGuard(_app, paths=("/api/",))
    asyncio.run(guard(scope, receive or body, send))
    answer = sent[1]["body"]
    return sent[0]["status"], (json.loads(answer) if answer else {}), bool(read)


def basic(username: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()


GIB = str(2**30)


@pytest.fixture(autouse=True)
def _limit():
    with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=2_621_440):
        yield


@pytest.mark.django_db(transaction=True)
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
        ("authorization", "said"),
        [
            ("x", "not provided"),
            ("Token made-up", "not provided"),  # no TokenAuthentication in these settings
            (basic("ardian", "wrong"), "Invalid username/password."),
            ("Bearer chr_agent_000000000000_" + "A" * 43, "Invalid agent credential"),
            ("Bearer chr_agent_ two parts", "holds no space"),
        ],
    )
    def test_credentials_that_are_not_valid_are_401_unread(self, ardian, authorization, said):
        status, body, read = call(
            "/api/chronica/x/acta/", {"Content-Length": "2600000", "Authorization": authorization}
        )
        assert (status, read) == (401, False)
        assert said in body["detail"]

    def test_a_made_up_session_is_401_unread(self):
        status, _, read = call(
            "/api/chronica/x/acta/", {"Content-Length": "300", "Cookie": "sessionid=made-up"}
        )
        assert (status, read) == (401, False)

    def test_valid_credentials_pass(self, ardian, client):
        from chronica import services

        secret = services.issue_credential(services.owner_id_for(ardian), "booking").secret
        client.force_login(ardian)
        session = client.cookies["sessionid"].value
        for headers in (
            {"Authorization": basic("ardian", "ardian-password")},
            {"Authorization": f"Bearer {secret}"},
            {"Cookie": f"csrftoken=a; sessionid={session}"},
        ):
            status, _, read = call("/api/chronica/x/acta/", {"Content-Length": "300", **headers})
            assert (status, read) == (201, True), headers

    def test_a_request_without_a_body_passes(self):
        for headers in ({}, {"Content-Length": "0", "Authorization": "x"}):
            status, _, read = call("/api/chronica/x/acta/", headers)
            assert (status, read) == (201, True)

    def test_other_paths_pass(self):
        status, _, read = call("/admin/login/", {"Content-Length": "300"})
        assert (status, read) == (201, True)

    def test_a_body_that_does_not_arrive_in_time_is_408(self, ardian):
        async def never():
            await asyncio.sleep(3600)

        guard = BodyGuard(_app, paths=("/api/",), body_timeout=0.2)
        headers = {"Content-Length": "300", "Authorization": basic("ardian", "ardian-password")}
        status, body, _ = call("/api/chronica/x/acta/", headers, guard=guard, receive=never)
        assert status == 408
        assert "did not arrive within 0.2 s" in body["detail"]
