"""``manage.py chronica_show``: an operator reads dinner-friday in a terminal."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from chronica import Actum, services
from chronica.management.commands.chronica_show import Command

from . import scenario
from .scenario import CHRONICUM, OWNER, A

pytestmark = pytest.mark.django_db


@pytest.fixture
def dinner() -> list[Actum]:
    return [services.record_actum(OWNER, a) for a in scenario.acta()]


def show(*args: str) -> list[str]:
    out = StringIO()
    call_command("chronica_show", *args, stdout=out)
    return out.getvalue().splitlines()


def test_the_transcript_is_an_aligned_table_in_write_order(dinner):
    lines = show(CHRONICUM)
    assert lines[0].split() == ["KIND", "ACTOR", "CONTENT"]
    assert lines[1:3] == [
        "message        ardian (human)     Find us a quiet table for four in Kemang on Friday"
        " at 7pm.",
        "thought        concierge (agent)  Search first, then hand the booking over.",
    ]
    column = lines[0].index("CONTENT")
    assert [line[column:] for line in lines[1:]] == [row[3] for row in scenario.SEVEN]
    assert [line.split()[0] for line in lines[1:]] == [row[0].value for row in scenario.SEVEN]


def test_filters_run_before_the_last_n_as_for_a_context_window(dinner):
    lines = show(CHRONICUM, "--kind", "message", "--last-n", "3")
    assert [line.split("  ")[0] for line in lines[1:]] == ["message"] * 3
    assert lines[-1].endswith("Book Rumah Teduh for four at 7pm on Friday under Ardian.")
    assert lines[1].endswith("Rumah Teduh and Kayu Manis both have a quiet table for four at 7pm.")


def test_kinds_and_actor_kinds_repeat_or_take_commas(dinner):
    repeated = show(CHRONICUM, "--kind", "tool_request", "--kind", "tool_response")
    assert repeated == show(CHRONICUM, "--kind", "tool_request,tool_response")
    assert len(repeated) == 3
    humans = show(CHRONICUM, "--actor-kind", "human", "--json")
    assert [json.loads(line)["content"] for line in humans] == [
        scenario.SEVEN[0][3],
        "Rumah Teduh.",
    ]


def test_json_lines_carry_what_the_api_returns(dinner):
    rows = [json.loads(line) for line in show(CHRONICUM, "--json")]
    assert [r["id"] for r in rows] == [a.id for a in dinner]
    assert rows[2] == {
        "id": dinner[2].id,
        "chronicum_id": CHRONICUM,
        "kind": "tool_request",
        "actor_kind": "agent",
        "actor": "search",
        "content": '{"area":"Kemang","party":4,"quiet":true}',
        "at": dinner[2].at.isoformat(),
    }


def test_an_operator_reads_any_owners_chronicum(dinner):
    services.record_actum(
        "rafa",
        Actum(
            chronicum_id="lunch-saturday",
            kind="message",
            actor_kind="human",
            actor="rafa",
            content="Sushi?",
        ),
    )
    assert show("lunch-saturday")[1:] == ["message  rafa (human)  Sushi?"]


def test_continuation_lines_stay_in_the_content_column():
    services.record_actum(
        OWNER,
        Actum(
            chronicum_id=CHRONICUM,
            kind="thought",
            actor_kind=A,
            actor="concierge",
            content="Two options:\nRumah Teduh\nKayu Manis",
        ),
    )
    lines = show(CHRONICUM)
    column = lines[0].index("CONTENT")
    assert [line[column:] for line in lines[1:]] == ["Two options:", "Rumah Teduh", "Kayu Manis"]
    assert lines[2][:column].strip() == ""


def test_an_unknown_id_is_a_clear_error_with_exit_status_1(dinner, capsys):
    with pytest.raises(CommandError, match="no chronicum with ID 'dinner-saturday'") as caught:
        show("dinner-saturday")
    assert caught.value.returncode == 1
    with pytest.raises(SystemExit) as exited:
        Command().run_from_argv(["manage.py", "chronica_show", "dinner-saturday"])
    assert exited.value.code == 1
    assert "CommandError: no chronicum with ID 'dinner-saturday'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kind", "memo"], "unknown kind 'memo'"),
        (["--actor-kind", "robot"], "unknown actor_kind 'robot'"),
    ],
)
def test_an_unknown_kind_is_a_clear_error(dinner, args, message):
    with pytest.raises(CommandError, match=message):
        show(CHRONICUM, *args)
