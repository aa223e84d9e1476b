"""``--actor`` on ``chronica_show`` and ``chronica_follow``: what ardian and booking said."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from chronica import services

from .. import scenario
from ..scenario import CHRONICUM, OWNER
from .test_follow_command import fast_polls

__all__ = ["fast_polls"]  # fixture

pytestmark = pytest.mark.django_db(transaction=True)


def run(command: str, *args: str) -> list[str]:
    out = io.StringIO()
    call_command(command, *args, stdout=out)
    return out.getvalue().splitlines()


def said(lines: list[str]) -> list[tuple[str, str]]:
    return [(a["actor"], a["content"]) for a in map(json.loads, lines)]


@pytest.fixture
def booked():
    acta = services.record_acta(OWNER, scenario.acta())
    return [*acta, services.record_actum(OWNER, scenario.booking_reply())]


def test_show_repeated_or_comma_separated(booked):
    lines = run("chronica_show", CHRONICUM, "--actor", "ardian", "--actor", "booking", "--json")
    assert said(lines) == [(a.actor, a.content) for a in booked if a.actor in ("ardian", "booking")]
    assert run("chronica_show", CHRONICUM, "--actor", "ardian,booking", "--json") == lines


def test_show_with_the_other_flags_before_the_limit(booked):
    lines = run(
        "chronica_show", CHRONICUM, "--actor", "search", "--actor", "ardian",
        "--kind", "message", "--last-n", "2", "--json",
    )  # fmt: skip
    assert said(lines) == [
        ("search", "Rumah Teduh and Kayu Manis both have a quiet table for four at 7pm."),
        ("ardian", "Rumah Teduh."),
    ]


def test_show_refuses_what_no_actor_can_be(booked):
    with pytest.raises(CommandError, match="longer than 255"):
        run("chronica_show", CHRONICUM, "--actor", "x" * 256)


def test_follow_prints_only_those_actors(booked):
    lines = run(
        "chronica_follow", CHRONICUM, "--owner", OWNER, "--after", booked[0].id,
        "--actor", "ardian", "--actor", "booking", "--count", "2", "--json",
    )  # fmt: skip
    assert said(lines) == [("ardian", "Rumah Teduh."), ("booking", scenario.BOOKING_REPLY)]


def test_follow_refuses_what_no_actor_can_be(booked):
    with pytest.raises(CommandError, match="longer than 255"):
        run("chronica_follow", CHRONICUM, "--owner", OWNER, "--actor", "x" * 256)
