"""``manage.py chronica_follow``: an operator watches dinner-friday as the agents write."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import threading
import time

import pytest
from django.core.management import CommandError, call_command
from django.db import connections
from django.test import override_settings

from chronica import services

from .. import scenario
from ..exampleproject import PYTHON, ROOT, environment, stop
from ..scenario import CHRONICUM, OWNER

pytestmark = pytest.mark.django_db(transaction=True)

DEADLINE = 60


@pytest.fixture(autouse=True)
def fast_polls():
    with override_settings(CHRONICA={"FOLLOW_POLL_INTERVAL": 0.05}):
        services.reset_chronicarius()
        yield
    services.reset_chronicarius()


def follow_in_thread(*args: str) -> tuple[threading.Thread, io.StringIO]:
    out = io.StringIO()

    def run() -> None:
        try:
            call_command("chronica_follow", *args, stdout=out)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def test_prints_the_acta_after_a_given_one_and_stops_at_count():
    stored = services.record_acta(OWNER, scenario.acta())
    out = io.StringIO()
    call_command(
        "chronica_follow",
        CHRONICUM,
        "--owner",
        OWNER,
        "--after",
        stored[3].id,
        "--count",
        "3",
        stdout=out,
    )
    lines = out.getvalue().splitlines()
    assert [line.split()[1:3] for line in lines] == [
        ["message", "search"],
        ["message", "ardian"],
        ["message", "concierge"],
    ]
    assert lines[1].endswith("ardian (human)  Rumah Teduh.")


def test_waits_for_new_acta_and_prints_json_lines():
    services.record_actum(OWNER, scenario.acta()[0])
    thread, out = follow_in_thread(
        CHRONICUM, "--owner", OWNER, "--kind", "message", "--count", "2", "--json"
    )
    time.sleep(0.5)
    stored = services.record_acta(OWNER, scenario.acta()[1:])
    thread.join(DEADLINE)
    assert not thread.is_alive()
    printed = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [p["id"] for p in printed] == [a.id for a in stored if a.kind == "message"][:2]


def test_a_multi_line_content_stays_in_its_column():
    first = services.record_actum(OWNER, scenario.acta()[0])
    services.record_actum(OWNER, scenario.booking_reply("Held.\nConfirmation RT-4821."))
    out = io.StringIO()
    call_command(
        "chronica_follow",
        CHRONICUM,
        "--owner",
        OWNER,
        "--after",
        first.id,
        "--count",
        "1",
        stdout=out,
    )
    head, more = out.getvalue().splitlines()
    assert head.endswith("Held.")
    assert more.strip() == "Confirmation RT-4821."
    assert more.index("Confirmation") == head.index("Held.")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--owner", "rafa"], "no chronicum with ID 'dinner-friday' for owner 'rafa'"),
        (["--owner", OWNER, "--after", "nope"], "after='nope' is not an actum"),
        (["--owner", OWNER, "--kind", "gossip"], "gossip"),
    ],
)
def test_errors_are_command_errors(args, message):
    services.record_acta(OWNER, scenario.acta())
    with pytest.raises(CommandError, match=message):
        call_command("chronica_follow", CHRONICUM, *args, stdout=io.StringIO())


@pytest.mark.slow
def test_a_tail_f_in_its_own_process_until_ctrl_c():
    first = services.record_actum(OWNER, scenario.acta()[0])
    process = subprocess.Popen(
        [PYTHON, "manage.py", "chronica_follow", CHRONICUM, "--owner", OWNER, "--after", first.id],
        cwd=ROOT,
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    try:
        reply = services.record_actum(OWNER, scenario.booking_reply())
        line = process.stdout.readline()  # type: ignore[union-attr]
        assert line.rstrip().endswith(f"booking (agent)  {reply.content}")
        process.send_signal(signal.SIGINT)
        assert process.wait(DEADLINE) == 0, process.stderr.read()  # type: ignore[union-attr]
    finally:
        if process.poll() is None:
            stop(process)
