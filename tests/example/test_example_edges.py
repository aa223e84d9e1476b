"""example_project's API over real HTTP, at its edges: whatever the path, the query or
the database, an answer under ``/api/`` is JSON. Served as deployed, by uvicorn
(``asgi.py``) and by gunicorn (``wsgi.py``), on this run's test database, and once on
a database that accepts connections and never answers."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.database import silent_server
from tests.exampleproject import PYTHON, environment, free_port, serving

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

GOOD = {"kind": "message", "actor_kind": "human", "actor": "ardian", "content": "Friday, 7pm?"}
# Short, so that the request line fits gunicorn's limit (4,094 bytes).
TOO_MANY = "&".join(["p"] * 1001)


def command(server: str, port: int) -> list[str]:
    if server == "uvicorn":
        return [
            *(PYTHON, "-m", "uvicorn", "example_project.asgi:application"),
            *("--host", "127.0.0.1", "--port", str(port), "--no-proxy-headers"),
        ]
    return [
        *(PYTHON, "-m", "gunicorn", "example_project.wsgi:application"),
        *(f"--bind=127.0.0.1:{port}", "--workers=1"),
    ]


@pytest.fixture(params=["uvicorn", "gunicorn"])
def served(request, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    log = tmp_path / "server.log"
    with serving(command(request.param, port), port, log, ready="/static/admin/css/base.css"):
        yield f"127.0.0.1:{port}"


@pytest.fixture
def token(ardian) -> str:
    from rest_framework.authtoken.models import Token

    return Token.objects.create(user=ardian).key


def send(address: str, method: str, path: str, body: object = None, **headers: str):
    """``(status, headers, JSON body)``; the path is sent byte for byte as given."""
    host, port = address.split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        data = None if body is None else json.dumps(body).encode()
        if data is not None:
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=data, headers=headers)
        answer = connection.getresponse()
        raw = answer.read()
        assert answer.getheader("Content-Type") == "application/json", raw[:300]
        return answer.status, answer, json.loads(raw)
    finally:
        connection.close()


def test_every_edge_is_json(served: str, token: str):
    auth = {"Authorization": f"Token {token}"}
    for method in ("GET", "POST"):
        status, _, body = send(served, method, "/api/chronica/dinner%2Ffriday/acta/", GOOD, **auth)
        assert (status, body) == (404, {"detail": "Not found."})
    for path in ("/api/nothing/", "/api/chronica/dinner-friday/nothing/", "/api/schema/x/"):
        status, _, body = send(served, "GET", path)
        assert (status, body) == (404, {"detail": "Not found."}), path

    status, _, body = send(served, "POST", "/api/chronica/dinner%FFfriday/acta/", GOOD, **auth)
    assert status == 400
    assert body["detail"].startswith("the path is not UTF-8")

    for path in ("/api/chronica/dinner-friday/acta/", "/api/schema/"):
        status, _, body = send(served, "GET", f"{path}?{TOO_MANY}", **auth)
        assert status == 400, path
        assert "DATA_UPLOAD_MAX_NUMBER_FIELDS" in body["detail"]

    status, _, listing = send(served, "GET", "/api/chronica/", **auth)
    assert (status, listing["results"]) == (200, [])
    status, _, stored = send(served, "POST", "/api/chronica/d%C3%ADnner/acta/", GOOD, **auth)
    assert (status, stored["chronicum_id"]) == (201, "dínner")


@pytest.mark.parametrize("server", ["uvicorn", "gunicorn"])
def test_a_silent_database_is_a_json_503(server: str, tmp_path: Path):
    """The database accepts connections and never answers: the schema (signed in by a
    session cookie, which is looked up) and the API answer 503 with Retry-After once the
    connect timeout gives up."""
    with silent_server() as silent:
        env = environment(
            DATABASE_URL=f"postgres://postgres@127.0.0.1:{silent}/chronica",
            DJANGO_CONNECT_TIMEOUT="1",
        )
        port = free_port()
        log = tmp_path / "server.log"
        with serving(
            command(server, port), port, log, env=env, ready="/static/admin/css/base.css"
        ) as base:
            address = base.removeprefix("http://")
            for path, headers in (
                ("/api/schema/", {"Cookie": "sessionid=ardians-session"}),
                ("/api/chronica/dinner-friday/acta/", {"Authorization": "Token ardians-token"}),
            ):
                status, answer, body = send(address, "GET", path, **headers)
                assert status == 503, (path, body)
                assert answer.getheader("Retry-After") == "5"
                assert "database" in body["detail"]
