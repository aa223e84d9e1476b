"""``manage.py chronica_show``: an operator reads dinner-friday in a terminal."""

from __future__ import annotations

import dataclasses
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from chronica import Actum, services
from chronica.management.commands import chronica_show
from chronica.management.commands.chronica_show import SHOWN_CHARS, Command

from .. import scenario
from ..scenario import CHRONICUM, OWNER, RES, A, H, M

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
    assert lines[0].split() == ["KIND", "ACTOR", "BY", "CONTENT"]
    assert lines[1:3] == [
        "message        ardian (human)     not attested  Find us a quiet table for four in"
        " Kemang on Friday at 7pm.",
        "thought        concierge (agent)  not attested  Search first, then hand the booking over.",
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
        "call_id": "",
        "data": None,
        "recorded_by": None,
        "redacted": None,
        "compacts": "",
    }


def test_a_redacted_actum_shows_as_such(dinner):
    services.redact_actum(OWNER, CHRONICUM, dinner[2].id, reason="pasted a secret")
    table = show(CHRONICUM)
    assert "[redacted " in table[3]
    assert table[3].endswith("UTC: pasted a secret]")
    assert '"area"' not in "\n".join(table)
    row = [json.loads(line) for line in show(CHRONICUM, "--json")][2]
    assert row["content"] == ""
    assert row["redacted"]["reason"] == "pasted a secret"


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
    assert show("lunch-saturday")[1:] == ["message  rafa (human)  not attested  Sushi?"]


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


def lunch(chronicum_id: str, owner: str = OWNER, content: str = "Sushi?") -> Actum:
    actum = Actum(chronicum_id=chronicum_id, kind=M, actor_kind=H, actor=owner, content=content)
    return services.record_actum(owner, actum)


class TestListing:
    def test_an_owners_chronica_latest_activity_first(self, dinner):
        lunch("lunch-saturday")
        lunch("lunch-sunday", owner="rafa")
        lunch(CHRONICUM, content="Make it 7:30.")
        lines = show("--owner", OWNER)
        assert lines[0].split() == ["LAST", "ACTIVITY", "STARTED", "ID"]
        assert [line.split()[-1] for line in lines[1:]] == [CHRONICUM, "lunch-saturday"]
        listed = services.list_chronica(OWNER)
        assert lines[1].split()[:2] == [
            listed[0].last_activity_at.isoformat(timespec="seconds"),
            listed[0].started_at.isoformat(timespec="seconds"),
        ]

    def test_json_lines_as_the_api_lists_them(self, dinner):
        rows = [json.loads(line) for line in show("--owner", OWNER, "--json")]
        (chronicum,) = services.list_chronica(OWNER)
        assert rows == [
            {
                "id": CHRONICUM,
                "owner_id": OWNER,
                "started_at": chronicum.started_at.isoformat(),
                "last_activity_at": chronicum.last_activity_at.isoformat(),
            }
        ]

    def test_pages_through_every_chronicum_once(self, monkeypatch):
        monkeypatch.setattr(chronica_show, "LIST_PAGE", 3)
        for day in range(10):
            lunch(f"lunch-{day}")
        lines = show("--owner", OWNER)[1:]
        assert [line.split()[-1] for line in lines] == [f"lunch-{day}" for day in range(9, -1, -1)]

    def test_an_owner_without_chronica_gets_a_clear_line(self, dinner):
        assert show("--owner", "rafa") == ["Owner 'rafa' has no chronica."]
        assert show("--owner", "rafa", "--json") == []

    def test_neither_id_nor_owner_is_a_clear_error(self):
        with pytest.raises(CommandError, match="give a chronicum ID"):
            show()
        with pytest.raises(CommandError, match="need an ID"):
            show("--owner", OWNER, "--last-n", "3")

    def test_with_an_owner_an_id_of_someone_else_is_not_found(self, dinner):
        assert show(CHRONICUM, "--owner", OWNER) == show(CHRONICUM)
        with pytest.raises(CommandError, match="no chronicum with ID 'dinner-friday' of owner"):
            show(CHRONICUM, "--owner", "rafa")


class TestMaxTokens:
    @pytest.mark.parametrize(
        "options",
        [
            {"max_tokens": 0},
            {"max_tokens": 20},
            {"max_tokens": 45},
            {"max_tokens": 10_000},
            {"max_tokens": 30, "kinds": ["message"]},
            {"max_tokens": 60, "last_n": 2},
        ],
    )
    def test_the_window_is_exactly_services_get_acta(self, dinner, options):
        args = ["--json", "--max-tokens", str(options["max_tokens"])]
        if "kinds" in options:
            args += ["--kind", ",".join(options["kinds"])]
        if "last_n" in options:
            args += ["--last-n", str(options["last_n"])]
        shown = [json.loads(line)["id"] for line in show(CHRONICUM, *args)]
        expected = services.get_acta(OWNER, CHRONICUM, **options)
        assert shown == [a.id for a in expected]

    def test_some_budgets_cut_the_window(self, dinner):
        sizes = {len(show(CHRONICUM, "--json", "--max-tokens", str(n))) for n in range(0, 80, 5)}
        assert len(sizes) > 2

    def test_a_negative_budget_is_the_services_error(self, dinner):
        with pytest.raises(CommandError, match="max_tokens must be 0 or more"):
            show(CHRONICUM, "--max-tokens", "-1")


class TestEmptyAndHuge:
    def test_an_empty_session_says_so(self):
        services.create_chronicum(OWNER, CHRONICUM)
        assert show(CHRONICUM) == ["'dinner-friday' has no acta yet."]
        assert show(CHRONICUM, "--json") == []

    def test_a_window_that_matches_nothing_says_so(self, dinner):
        assert show(CHRONICUM, "--actor-kind", "system") == [
            "No acta of 'dinner-friday' match these options."
        ]
        assert show(CHRONICUM, "--max-tokens", "0") == [
            "No acta of 'dinner-friday' match these options."
        ]

    @pytest.fixture
    def five_megabytes(self, settings):
        settings.CHRONICA = {"MAX_ACTUM_BYTES": 8 * 1024 * 1024}
        menu = "Rumah Teduh menu: nasi goreng, sate, rendang.\n" * 110_000
        assert len(menu) > 5_000_000
        lunch(CHRONICUM, content="Send me the menu.")
        services.record_actum(
            OWNER,
            Actum(chronicum_id=CHRONICUM, kind=M, actor_kind=A, actor="search", content=menu),
        )
        return menu

    def test_a_huge_actum_is_cut_with_a_note(self, five_megabytes):
        out = "\n".join(show(CHRONICUM))
        assert len(out) < 2 * SHOWN_CHARS
        left_out = len(five_megabytes) - SHOWN_CHARS
        assert out.endswith(
            f"[… {left_out:,} more of {len(five_megabytes):,} characters not shown;"
            " --full shows all]"
        )
        assert "Send me the menu." in out

    def test_full_shows_it_all_and_json_is_always_whole(self, five_megabytes):
        column = show(CHRONICUM)[0].index("CONTENT")
        full = [line[column:] for line in show(CHRONICUM, "--full")[2:]]
        assert "\n".join(full) == five_megabytes
        rows = [json.loads(line) for line in show(CHRONICUM, "--json")]
        assert rows[-1]["content"] == five_megabytes


def test_call_id_and_data_follow_the_content():
    services.record_actum(
        OWNER,
        Actum(
            chronicum_id=CHRONICUM,
            kind=RES,
            actor_kind=A,
            actor="search",
            content="2 found",
            call_id="call-1",
            data={"found": ["Rumah Teduh", "Kayu Manis"]},
        ),
    )
    lines = show(CHRONICUM)
    column = lines[0].index("CONTENT")
    assert [line[column:] for line in lines[1:]] == [
        "2 found",
        "call_id: call-1",
        'data: {"found": ["Rumah Teduh", "Kayu Manis"]}',
    ]


def test_beside_the_actor_who_wrote_it_as_the_admin_words_it():
    """The person signed in, an agent's credential, and a trusted server-side call."""
    said = Actum(chronicum_id=CHRONICUM, kind=M, actor_kind=H, actor="ardian", content="Book it.")
    services.acting_as(services.OwnerIdentity(OWNER)).record_actum(OWNER, said)
    issued = services.issue_credential(OWNER, "booking")
    booking = services.acting_as(services.authenticate_credential(issued.secret))
    held = Actum(chronicum_id=CHRONICUM, kind=M, actor_kind=A, actor="booking", content="Held.")
    booking.record_actum(OWNER, held)
    services.record_actum(OWNER, dataclasses.replace(said, content="Thanks."))
    lines = show(CHRONICUM)
    column = lines[0].index("BY")
    assert [line[column:].split("  ")[0] for line in lines[1:]] == [
        "owner",
        f"credential {issued.info.key_id}",
        "not attested",
    ]
    assert [json.loads(line)["recorded_by"] for line in show(CHRONICUM, "--json")] == [
        "owner",
        f"credential:{issued.info.key_id}",
        None,
    ]
