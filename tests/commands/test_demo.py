"""``make demo`` without the server: what a Django engineer sees in their terminal.

The demo runs as ``python manage.py chronica_demo`` on this run's test database,
the way ``make demo`` runs it on .demo/db.sqlite3 or on DATABASE_URL.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from chronica import Actum, ChronicumNotFound, services
from tests import scenario
from tests.exampleproject import (
    PYTHON,
    ROOT,
    database_url,
    environment,
    free_port,
    get,
    stop,
    wait_for,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def run_demo(*args: str, check: bool = True, **env: str) -> str:
    done = subprocess.run(
        [PYTHON, "manage.py", "chronica_demo", *args],
        cwd=ROOT,
        env=environment(**env),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        check=False,
    )
    if check:
        assert done.returncode == 0, done.stderr
        return done.stdout
    assert done.returncode != 0, done.stdout
    return done.stderr


def window(output: str, agent: str) -> list[tuple[str, str, str]]:
    """The acta the demo marked ``▶`` in ``agent``'s window: (kind, actor, content)."""
    block = output.split(f"\n{agent} ", 1)[1].split("\n\n", 1)[0]
    marked = [line.split(maxsplit=3) for line in block.splitlines() if line.startswith("▶")]
    return [(kind, actor, content) for _, kind, actor, content in marked]


def seven(*indexes: int) -> list[tuple[str, str, str]]:
    return [
        (str(scenario.SEVEN[i][0]), scenario.SEVEN[i][2], scenario.SEVEN[i][3]) for i in indexes
    ]


def printed(output: str, prefix: str) -> str:
    """The rest of the first printed line that starts with ``prefix``."""
    return next(line for line in output.splitlines() if line.startswith(prefix))[len(prefix) :]


def demo_owner() -> str:
    from django.contrib.auth import get_user_model

    return str(get_user_model().objects.get(username="demo").pk)


@dataclass(frozen=True)
class Demo:
    """What three runs of the demo printed, answered and left, read before any test's
    flush."""

    output: str  # the first run's (make demo's: --serve), with CHRONICA_DEMO_PASSWORD set
    acta: list[Actum]  # dinner-friday after it
    served: dict[str, Any]  # what its server answered (served_answers)
    busy: str  # a second demo's error, serving on the first's port while it serves
    after_busy: dict[str, Any]  # what the database held after that one
    again: str  # a third run's output, after the first stopped
    after_again: dict[str, Any]  # what the database held after that one


def _signs_in(*passwords: str) -> list[bool]:
    from django.conf import global_settings
    from django.contrib.auth import authenticate
    from django.test import override_settings

    # The demo hashes with Django's default hashers; the test settings keep only MD5.
    with override_settings(PASSWORD_HASHERS=global_settings.PASSWORD_HASHERS):
        return [authenticate(username="demo", password=p) is not None for p in passwords]


def _counts() -> dict[str, int | None]:
    counts: dict[str, int | None] = {}
    for chronicum_id in ("dinner-friday", "dinner-friday-2"):
        try:
            counts[chronicum_id] = len(services.get_acta(demo_owner(), chronicum_id))
        except ChronicumNotFound:
            counts[chronicum_id] = None
    return counts


def served_answers(base: str, output: str) -> dict[str, Any]:
    """What the served demo answers besides its admin's sign-in page (wait_for's): the
    admin's stylesheet, the schema, booking's window with the printed credential, the
    follow page."""
    schema_status, schema = get(f"{base}/api/schema/", Accept="application/json")
    window_status, body = get(
        f"{base}/api/chronica/dinner-friday/acta/?kind=message&last_n=3",
        Accept="application/json",
        Authorization=f"Bearer {printed(output, '  Authorization: Bearer ')}",
    )
    return {
        "stylesheet": get(f"{base}/static/admin/css/base.css")[0],
        "schema": (schema_status, json.loads(schema)["paths"] if schema_status == 200 else {}),
        "window": (window_status, json.loads(body) if window_status == 200 else body),
        "follow": get(f"{base}/follow/dinner-friday/")[0],
        "base": base,
    }


@pytest.fixture(scope="module")
def demo(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Demo:
    """``make demo`` run once, serving; a second one on its port while it serves; a third
    one after it stopped: what each printed, answered and left, for the tests below that
    only look (each demo is seconds of importing every framework and running an agent on
    each: one sequence serves them all, and the flush after the first of them empties the
    database)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = (tmp_path_factory.mktemp("demo") / "demo.log").open("w+", encoding="utf-8")
    server = subprocess.Popen(
        [PYTHON, "manage.py", "chronica_demo", "--serve", "--addrport", f"127.0.0.1:{port}"],
        cwd=ROOT,
        # (unbuffered: the log grows as the demo goes, which wait_for counts as progress)
        env=environment(PYTHONUNBUFFERED="1", CHRONICA_DEMO_PASSWORD="first-demo-password"),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        admin = wait_for(f"{base}/admin/login/", server, log)
        log.seek(0)
        output = log.read()
        served = {"admin": admin, **served_answers(base, output)}
        with django_db_blocker.unblock():
            acta = services.get_acta(demo_owner(), "dinner-friday")
        busy = run_demo(
            "--serve",
            "--addrport",
            f"127.0.0.1:{port}",
            check=False,
            CHRONICA_DEMO_PASSWORD="second-demo-password",
        )
        with django_db_blocker.unblock():
            after_busy = {
                "port": port,
                "signs in": _signs_in("first-demo-password", "second-demo-password"),
                "acta": _counts(),
            }
    finally:
        stop(server)
        log.close()
    again = run_demo()
    with django_db_blocker.unblock():
        after_again = {
            "signs in": _signs_in(printed(again, "Sign in as demo / ")),
            "acta": _counts(),
        }
    return Demo(output, acta, served, busy, after_busy, again, after_again)


def test_booking_agent_reads_seven_acta_in_three_out(demo: Demo) -> None:
    output = demo.output

    assert "get_acta(kinds=message last_n=3): 7 acta in, 3 out" in output
    assert window(output, "booking") == seven(4, 5, 6)


def test_concierge_and_search_read_their_own_parts(demo: Demo) -> None:
    output = demo.output

    # The concierge skips the raw tool traffic; search reads what ardian asked for.
    assert window(output, "concierge") == seven(0, 1, 4, 5, 6)
    assert window(output, "search") == seven(0, 5)


def test_booking_reply_retried_reworded_is_recorded_once(demo: Demo) -> None:
    output = demo.output

    stored_id = printed(output, "  stored ")
    assert printed(output, "  got    ") == stored_id
    replies = [(a.id, a.recorded_by) for a in demo.acta if a.content == scenario.BOOKING_REPLY]
    assert len(replies) == 1
    assert replies[0][0] == stored_id
    assert "dinner-friday holds 8 acta: the seven and the reply, once." in output
    # booking's reply is written with booking's own credential, and the forged
    # consent of a prompt-injected booking agent is refused.
    assert replies[0][1].startswith("credential:")
    assert "refused (actor): the credential of 'booking'" in output
    assert "nothing written: dinner-friday still holds 8 acta." in output
    assert printed(output, "  Authorization: Bearer ").startswith("chr_agent_")


def test_agents_on_every_framework_share_the_one_session_and_every_actum_is_attested(
    demo: Demo,
) -> None:
    """make demo runs an agent on the OpenAI Agents SDK, PydanticAI, LangGraph and Google ADK in
    dinner-friday itself, each reading its own window with its own credential."""
    from example_project.dinner.frameworks import TURNS
    from example_project.dinner.scenario import BIRTHDAY, BOOKING_CAKE, CAKE_ANSWER, REMINDER

    output, acta = demo.output, demo.acta

    assert len(acta) == 17
    assert all(a.recorded_by is not None for a in acta)
    assert "not attested" not in output
    assert [a.recorded_by for a in acta if a.actor_kind == "human"] == ["owner"] * 3
    after = [(a.actor, a.content) for a in acta[8:] if a.kind == "message"]
    assert after == [
        ("ardian", BIRTHDAY),
        ("concierge", scenario_text("CONCIERGE_BIRTHDAY")),
        ("search", CAKE_ANSWER),
        ("reminder", REMINDER),
        ("booking", BOOKING_CAKE),
    ]
    for turn in TURNS:
        assert f"{turn.agent} on {turn.framework}, reading {turn.reads}:" in output
    assert "dinner-friday holds 17 acta, each recorded by who wrote it:" in output
    # Nothing of ADK's own logging reaches the terminal unexplained.
    assert "context_cache_config" not in output


def scenario_text(name: str) -> str:
    from example_project.dinner import scenario as example

    return str(getattr(example, name))


def test_running_the_demo_again_records_a_fresh_session_for_the_same_owner(
    demo: Demo,
) -> None:
    first, second = demo.output, demo.again

    assert "this run records dinner-friday-2" in second
    assert window(second, "booking") == window(first, "booking")
    assert demo.after_again["acta"] == {"dinner-friday": 17, "dinner-friday-2": 17}
    # Each run prints the password it set, and that one signs in.
    password = printed(second, "Sign in as demo / ")
    assert printed(first, "Sign in as demo / ") != password
    assert demo.after_again["signs in"] == [True]


def test_serve_answers_the_admin_and_the_api_with_the_printed_token(demo: Demo) -> None:
    served, output = demo.served, demo.output

    assert served["admin"] == 200
    # DEBUG is off in the demo, and the admin still gets its stylesheet.
    assert served["stylesheet"] == 200
    status, paths = served["schema"]
    assert status == 200
    assert any(path.startswith("/api/chronica/") for path in paths)
    # The person's token is never printed: agents use their own credentials.
    assert "Authorization: Token" not in output
    assert f"{served['base']}/follow/dinner-friday/" in output
    # After the demo, booking's next window (with the printed credential) shows the
    # LangGraph reminder, then its own answer.
    status, window = served["window"]
    assert status == 200, window
    assert [a["actor"] for a in window] == ["search", "reminder", "booking"]
    assert window[-1]["content"] == scenario_text("BOOKING_CAKE")
    assert served["follow"] in (200, 302)  # the follow page, behind the sign-in


def test_the_windows_page_shows_each_agent_its_window_and_nobody_else_the_session(
    client: Client, settings: Any, django_user_model: Any
) -> None:
    from example_project.dinner.scenario import seven_acta

    settings.ROOT_URLCONF = "example_project.urls"
    ardian = django_user_model.objects.create_user("ardian")
    rafa = django_user_model.objects.create_user("rafa")
    for actum in seven_acta("dinner-friday"):
        services.record_actum(str(ardian.pk), actum)

    client.force_login(ardian)
    windows = {w["agent"]: w for w in client.get("/windows/dinner-friday/").json()["windows"]}
    assert windows["booking"]["options"] == "kinds=message last_n=3"
    assert [(a["kind"], a["actor"], a["content"]) for a in windows["booking"]["acta"]] == seven(
        4, 5, 6
    )

    client.force_login(rafa)
    assert client.get("/windows/dinner-friday/").status_code == 404
    assert client.get("/windows/no-such-session/").status_code == 404


def test_make_demo_serves_on_the_port_given_by_PORT() -> None:
    done = subprocess.run(
        ["make", "--dry-run", "--no-print-directory", "demo", "PORT=8010"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    (command,) = [line for line in done.stdout.splitlines() if "chronica_demo" in line]
    assert command.endswith("manage.py chronica_demo --serve --addrport 127.0.0.1:8010")


def test_a_second_demo_on_a_busy_port_changes_nothing(demo: Demo) -> None:
    error = demo.busy

    assert f"127.0.0.1:{demo.after_busy['port']} is in use" in error
    assert "Nothing was changed" in error
    # The running demo's password still signs in, and nothing was recorded again.
    assert printed(demo.output, "Sign in as demo / ") == "first-demo-password"
    assert demo.after_busy["signs in"] == [True, False]
    assert demo.after_busy["acta"] == {"dinner-friday": 17, "dinner-friday-2": None}


def test_on_postgresql_the_demo_creates_a_database_of_its_own() -> None:
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("the PostgreSQL demo runs on the PostgreSQL run (CHRONICA_TEST_DB=postgres)")
    name = f"{connection.settings_dict['NAME']}_demo"
    url = database_url().rsplit("/", 1)[0] + f"/{name}"
    with connection._nodb_cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {connection.ops.quote_name(name)}")
    try:
        first = run_demo(DATABASE_URL=url)
        again = run_demo(DATABASE_URL=url)
    finally:
        with connection._nodb_cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {connection.ops.quote_name(name)}")

    assert f"chronica demo on PostgreSQL database {name!r}" in first
    assert f"Created the database {name!r}." in first
    assert "dinner-friday holds 8 acta" in first
    assert "Created the database" not in again
    assert "dinner-friday-2 holds 8 acta" in again


def test_the_printed_agent_command_runs_in_a_fresh_shell_without_celery(
    demo: Demo, tmp_path: Path
) -> None:
    output = demo.output
    # The person's token's command and the booking agent's credential's: the same agent.
    command, *_ = [
        line.strip() for line in output.splitlines() if "example_project.dinner.http_agent" in line
    ]
    # Celery is a test dependency, not the agent's: a stand-in package that is "not installed".
    blocker = tmp_path / "celery"
    blocker.mkdir()
    (blocker / "__init__.py").write_text('raise ModuleNotFoundError("no celery")\n')
    done = subprocess.run(
        f"{command} --help",
        shell=True,
        cwd=ROOT,
        # A new terminal in the checkout: no venv activated, no PYTHONPATH to the repository.
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "--chronicum" in done.stdout
    assert "Traceback" not in done.stderr
