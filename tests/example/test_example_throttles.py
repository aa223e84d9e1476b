"""example_project's throttles hold against a client that lies about its address
(a rotating X-Forwarded-For), and its sign-in forms are throttled."""

from __future__ import annotations

import http.cookiejar
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator

import pytest

from tests.exampleproject import PYTHON, environment, free_port, serving

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ANON, SIGNIN = 5, 3


@pytest.fixture
def server(django_db_setup: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server of its own for each test: the throttles count per address, in its memory."""
    port = free_port()
    # As the README serves it: uvicorn's proxy headers off (by default uvicorn takes the
    # client's address from X-Forwarded-For whenever the peer is 127.0.0.1).
    command = [PYTHON, "-m", "uvicorn", "example_project.asgi:application", "--port", str(port)]
    command.append("--no-proxy-headers")
    env = environment(
        DJANGO_THROTTLE_ANON=f"{ANON}/minute", DJANGO_THROTTLE_SIGNIN=f"{SIGNIN}/minute"
    )
    env.pop("DJANGO_NUM_PROXIES", None)
    log = tmp_path_factory.mktemp("uvicorn") / "server.log"
    with serving([*command, "--host", "127.0.0.1"], port, log, env=env) as base:
        yield base


def status_of(opener: urllib.request.OpenerDirector, request: urllib.request.Request) -> int:
    try:
        with opener.open(request, timeout=60) as response:
            response.read()
            return int(response.status)
    except urllib.error.HTTPError as exc:
        exc.read()
        return exc.code


def test_a_rotating_x_forwarded_for_does_not_bypass_the_anonymous_throttle(server: str):
    opener = urllib.request.build_opener()
    statuses = [
        status_of(
            opener,
            urllib.request.Request(
                f"{server}/api/schema/", headers={"X-Forwarded-For": f"203.0.113.{n}"}
            ),
        )
        for n in range(ANON + 3)
    ]

    assert statuses[:ANON] == [200] * ANON
    assert statuses[ANON:] == [429] * 3


@pytest.mark.parametrize("form", ["/admin/login/", "/api-auth/login/"])
def test_the_sign_in_forms_are_throttled(server: str, form: str):
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(f"{server}{form}", timeout=60) as page:
        html = page.read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    assert token is not None

    def attempt(n: int) -> int:
        body = urllib.parse.urlencode(
            {"csrfmiddlewaretoken": token[1], "username": f"guess{form}", "password": f"x{n}"}
        ).encode()
        headers = {"X-Forwarded-For": f"198.51.100.{n}", "Referer": f"{server}{form}"}
        return status_of(opener, urllib.request.Request(f"{server}{form}", body, headers))

    statuses = [attempt(n) for n in range(SIGNIN + 2)]

    assert statuses[:SIGNIN] == [200] * SIGNIN  # the form again, with its error
    assert statuses[SIGNIN:] == [429] * 2
