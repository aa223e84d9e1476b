"""example_project under uvicorn: a body whose request carries no valid credentials is
answered 401 while it is still arriving, never read; one that stalls with valid
credentials is a 408 after ``DJANGO_BODY_TIMEOUT``."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.exampleproject import PYTHON, environment, free_port, serving

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

LENGTH = 2_600_000  # just over Django's in-memory body, just under the 413


@pytest.fixture
def address(tmp_path: Path) -> Iterator[tuple[str, int]]:
    port = free_port()
    command = [
        *(PYTHON, "-m", "uvicorn", "example_project.asgi:application"),
        *("--host", "127.0.0.1", "--port", str(port), "--no-proxy-headers"),
    ]
    env = environment(DJANGO_BODY_TIMEOUT="1", DJANGO_THROTTLE_ANON="100000/minute")
    with serving(
        command, port, tmp_path / "uvicorn.log", env=env, ready="/static/admin/css/base.css"
    ):
        yield "127.0.0.1", port


def stalled(address: tuple[str, int], authorization: str) -> socket.socket:
    """A POST whose headers and first 64 kB of body are sent, and no more."""
    sock = socket.create_connection(address, timeout=20)
    head = (
        "POST /api/chronica/dinner-friday/acta/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: {authorization}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {LENGTH}\r\n\r\n"
    )
    sock.sendall(head.encode() + b" " * 65536)
    return sock


def status_of(sock: socket.socket) -> int:
    answer = b""
    while b"\r\n" not in answer:
        chunk = sock.recv(4096)
        if not chunk:
            break
        answer += chunk
    return int(answer.split()[1])


def test_made_up_credentials_are_refused_while_the_body_stalls(address):
    # The example takes tokens and sessions, not Basic: "Basic" is no credential here.
    made_up = ["x", "Token made-up", "Basic eDp5", "Bearer chr_agent_000000000000_" + "A" * 43]
    socks = [stalled(address, auth) for auth in made_up * 25]
    try:
        assert [status_of(sock) for sock in socks] == [401] * 100
    finally:
        for sock in socks:
            sock.close()


def test_a_stalled_body_with_valid_credentials_is_408(address, ardian):
    from rest_framework.authtoken.models import Token

    from chronica import services

    token = Token.objects.create(user=ardian).key
    secret = services.issue_credential(services.owner_id_for(ardian), "booking").secret
    started = time.monotonic()
    for authorization in (f"Token {token}", f"Bearer {secret}"):
        sock = stalled(address, authorization)
        try:
            assert status_of(sock) == 408, authorization
        finally:
            sock.close()
    # Set up, the timeout is 1 s: not the 20 s the sockets would wait.
    assert time.monotonic() - started < 15
