"""An agent that runs as a service of its own writes into ardian's session over HTTP.

It holds ardian's DRF token (``manage.py drf_create_token ardian``) and never
names an owner: the API takes it from the token's user. example_project is served
by uvicorn and the agent (example_project/dinner/http_agent.py) runs in another
process, both on this run's test database.
"""

from __future__ import annotations

import base64
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chronica import services
from tests import scenario
from tests.exampleproject import PYTHON, ROOT, environment, free_port, get, serving

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def api(tmp_path: Path) -> Iterator[str]:
    """example_project under uvicorn: the URL chronica's API is included at."""
    port = free_port()
    command = [PYTHON, "-m", "uvicorn", "example_project.asgi:application", "--port", str(port)]
    with serving([*command, "--host", "127.0.0.1"], port, tmp_path / "uvicorn.log") as base:
        yield f"{base}/api/"


def manage(*args: str) -> str:
    done = subprocess.run(
        [PYTHON, "manage.py", *args],
        cwd=ROOT,
        env=environment(),
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def token_of(username: str) -> str:
    """The person's token, minted the way the README says: ``drf_create_token``."""
    printed = manage("drf_create_token", username)  # "Generated token <key> for user <name>"
    return printed.split()[2]


def agent(api: str, token: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-m", "example_project.dinner.http_agent", "--api", api, "--token", token, *args],
        cwd=ROOT,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def dinner_friday(ardian: Any) -> str:
    """ardian's dinner-friday with its seven acta; ardian's owner ID."""
    owner_id = services.owner_id_for(ardian)
    for actum in scenario.acta():
        services.record_actum(owner_id, actum)
    return owner_id


def test_the_booking_service_reads_its_window_and_replies_with_ardians_token(
    api: str, dinner_friday: str
) -> None:
    done = agent(api, token_of("ardian"))

    assert done.returncode == 0, done.stderr
    read = [line.split(maxsplit=2)[1:] for line in done.stdout.splitlines() if line[:4] == "read"]
    assert read == [[actor, content] for _, _, actor, content in scenario.SEVEN[4:]]
    stored_id = done.stdout.splitlines()[-1].removeprefix("stored ")
    acta = services.get_acta(dinner_friday, scenario.CHRONICUM)
    assert [(a.id, a.actor, a.content) for a in acta[7:]] == [
        (stored_id, "booking", scenario.BOOKING_REPLY)
    ]


def test_a_retried_service_call_with_its_key_records_the_reply_once(
    api: str, dinner_friday: str
) -> None:
    token = token_of("ardian")
    first = agent(api, token)
    again = agent(api, token, "--content", scenario.BOOKING_REPLY_REWORDED)

    assert first.returncode == again.returncode == 0, first.stderr + again.stderr
    stored = first.stdout.splitlines()[-1]
    assert again.stdout.splitlines()[-1] == f"{stored} (a replay: the first reply)"
    assert len(services.get_acta(dinner_friday, scenario.CHRONICUM)) == 8


def test_rafas_token_reaches_nothing_of_ardians(api: str, dinner_friday: str, rafa: Any) -> None:
    done = agent(api, token_of("rafa"))

    assert done.returncode == 1
    assert done.stderr.startswith("reading the window: 404")
    assert len(services.get_acta(dinner_friday, scenario.CHRONICUM)) == 7


def test_a_wrong_token_is_refused_with_a_challenge(api: str, dinner_friday: str) -> None:
    status, body = get(f"{api}chronica/{scenario.CHRONICUM}/acta/", Authorization="Token nope")

    assert status == 401
    assert b"Invalid token" in body


@pytest.fixture
def throttled_api(tmp_path: Path) -> Iterator[str]:
    """example_project with rates low enough to reach in a test."""
    port = free_port()
    command = [PYTHON, "-m", "uvicorn", "example_project.asgi:application", "--port", str(port)]
    env = environment(DJANGO_THROTTLE_USER="3/minute", DJANGO_THROTTLE_ANON="2/minute")
    with serving(
        [*command, "--host", "127.0.0.1"], port, tmp_path / "uvicorn.log", env=env
    ) as base:
        yield f"{base}/api/"


def test_a_person_over_the_rate_is_told_to_wait(throttled_api: str, dinner_friday: str) -> None:
    url = f"{throttled_api}chronica/{scenario.CHRONICUM}/"
    token = token_of("ardian")

    answers = [get(url, Authorization=f"Token {token}")[0] for _ in range(4)]

    assert answers == [200, 200, 200, 429]


def test_anonymous_callers_are_throttled_by_address(throttled_api: str) -> None:
    schema = f"{throttled_api}schema/"

    assert [get(schema)[0] for _ in range(3)] == [200, 200, 429]


def test_basic_authentication_is_not_offered(api: str, dinner_friday: str) -> None:
    # A password check per request is the cost that let wrong passwords stall everyone.
    basic = base64.b64encode(b"ardian:ardian-password").decode()

    status, _ = get(f"{api}chronica/{scenario.CHRONICUM}/", Authorization=f"Basic {basic}")

    assert status == 401
