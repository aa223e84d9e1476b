"""``chronica_show --json | head`` and ``chronica_follow | head``: the commands end quietly
when the reader closes the pipe, with no ``BrokenPipeError`` traceback."""

from __future__ import annotations

import dataclasses
import shlex
import subprocess

import pytest

from chronica import services

from .. import scenario
from ..exampleproject import PYTHON, ROOT, environment
from ..scenario import CHRONICUM, OWNER

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Far more than a pipe's buffer (64 KiB): the writer is still writing when head leaves.
MANY = 3000


def many_acta() -> str:
    first, *_ = services.record_acta(OWNER, scenario.acta())
    reply = scenario.booking_reply()
    services.record_acta(
        OWNER, [dataclasses.replace(reply, content=f"{reply.content} ({n})") for n in range(MANY)]
    )
    return first.id


def piped_into_head(*args: str) -> subprocess.CompletedProcess[str]:
    command = " ".join(shlex.quote(a) for a in [PYTHON, "manage.py", *args])
    return subprocess.run(
        ["bash", "-c", f"{command} | head -n 2"],
        cwd=ROOT,
        env=environment(),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )


def test_chronica_show_json_into_head_ends_without_a_traceback() -> None:
    many_acta()
    done = piped_into_head("chronica_show", CHRONICUM, "--owner", OWNER, "--json")
    assert len(done.stdout.splitlines()) == 2
    assert "Traceback" not in done.stderr, done.stderr
    assert "BrokenPipeError" not in done.stderr


def test_chronica_follow_into_head_ends_without_a_traceback() -> None:
    first = many_acta()
    done = piped_into_head("chronica_follow", CHRONICUM, "--owner", OWNER, "--after", first)
    assert len(done.stdout.splitlines()) == 2
    assert "Traceback" not in done.stderr, done.stderr
    assert "BrokenPipeError" not in done.stderr
