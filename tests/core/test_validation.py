"""Bad input in every field of the booking agent's reply, on both stores.

Every value either round-trips exactly or is refused with InvalidActum before
anything is written: no new chronicum, no actum, no bumped last_activity_at, and
never a database error.
"""

from __future__ import annotations

import dataclasses

import pytest

from chronica import Actum, ChronicumNotFound, EmptyOwnerID, InvalidActum
from chronica.services import Chronicarius

from .. import scenario
from ..scenario import BOOKING_REPLY, CHRONICUM, OWNER, A, M

KEY = "booking-reply-1"
FRESH = "dinner-saturday"
STRING_FIELDS = ["chronicum_id", "actor", "content", "owner", "idempotency_key"]
ID_FIELDS = ["chronicum_id", "actor", "owner", "idempotency_key"]
NAMED = {"owner": "owner_id"}  # how InvalidActum's message names a field

MEMORY_ONLY = pytest.mark.parametrize("store", ["memory"], indirect=True)
"""The tables of refusals run once, without a database: validation runs before a store
is touched. ``test_every_refusal_writes_nothing_on_either_store`` takes one case of each
to both stores."""


def reply_call(field: str, value: object, chronicum_id: str = CHRONICUM):
    """The booking agent's reply to ardian, with one field (or the owner, or the key) replaced."""
    owner, key = OWNER, KEY
    fields: dict[str, object] = {
        "chronicum_id": chronicum_id,
        "kind": M,
        "actor_kind": A,
        "actor": "booking",
        "content": BOOKING_REPLY,
    }
    if field == "owner":
        owner = value
    elif field == "idempotency_key":
        key = value
    else:
        fields[field] = value
    return owner, Actum(**fields), key


def chronicum_for(field: str, value: object) -> object:
    """dinner-friday is ardian's: another owner writes into a chronicum of their own."""
    return {"chronicum_id": value, "owner": FRESH}.get(field, CHRONICUM)


def record(chronicarius, field, value, chronicum_id=CHRONICUM):
    owner, actum, key = reply_call(field, value, chronicum_id)
    return chronicarius.record_actum(owner, actum, idempotency_key=key)


@pytest.fixture
def dinner(chronicarius):
    """dinner-friday with its seven acta, as it stands before the bad write."""
    for actum in scenario.acta():
        chronicarius.record_actum(OWNER, actum)
    return chronicarius.get_chronicum(OWNER, CHRONICUM), chronicarius.get_acta(OWNER, CHRONICUM)


def assert_nothing_written(chronicarius, dinner):
    chronicum, acta = dinner
    assert chronicarius.get_chronicum(OWNER, CHRONICUM) == chronicum
    assert chronicarius.get_acta(OWNER, CHRONICUM) == acta
    with pytest.raises(ChronicumNotFound):
        chronicarius.get_chronicum(OWNER, FRESH)


def assert_round_trip(chronicarius, owner, actum, key, stored):
    assert (stored.chronicum_id, stored.kind, stored.actor_kind, stored.actor, stored.content) == (
        actum.chronicum_id,
        actum.kind,
        actum.actor_kind,
        actum.actor,
        actum.content,
    )
    assert chronicarius.get_acta(owner, actum.chronicum_id)[-1] == stored
    assert chronicarius.get_chronicum(owner, actum.chronicum_id).owner_id == owner
    again = chronicarius.record_actum(owner, actum, idempotency_key=key)
    assert again == stored


# -- refused --------------------------------------------------------------------

REFUSED_TEXT = {
    "NUL": "Rumah\x00Teduh",
    "lone-surrogate": "Rumah \ud83c Teduh",  # half of an emoji, as JSON "\ud83c" decodes
    "lone-low-surrogate": "\udfff",
}


@MEMORY_ONLY
@pytest.mark.parametrize("field", STRING_FIELDS)
@pytest.mark.parametrize("bad", REFUSED_TEXT)
def test_text_no_database_can_keep_is_refused(chronicarius, dinner, field, bad):
    for chronicum_id in (FRESH, CHRONICUM):
        with pytest.raises(InvalidActum, match=NAMED.get(field, field)):
            record(chronicarius, field, REFUSED_TEXT[bad], chronicum_id)
    assert_nothing_written(chronicarius, dinner)


@MEMORY_ONLY
@pytest.mark.parametrize("field", ID_FIELDS)
def test_an_id_longer_than_255_characters_is_refused(chronicarius, dinner, field):
    for long_value in ("k" * 256, "🍽" * 256, "x" * 100_000):
        for chronicum_id in (FRESH, CHRONICUM):
            with pytest.raises(InvalidActum, match=f"{NAMED.get(field, field)} is longer than 255"):
                record(chronicarius, field, long_value, chronicum_id)
    assert_nothing_written(chronicarius, dinner)


WRONG_TYPES = [42, 4.2, True, b"booking", ["booking"], {"actor": "booking"}, object()]


@MEMORY_ONLY
@pytest.mark.parametrize("field", [*STRING_FIELDS, "kind", "actor_kind", "call_id"])
@pytest.mark.parametrize("value", WRONG_TYPES, ids=lambda v: type(v).__name__)
def test_a_field_of_the_wrong_type_is_refused(chronicarius, dinner, field, value):
    for chronicum_id in (FRESH, CHRONICUM):
        with pytest.raises(InvalidActum):
            record(chronicarius, field, value, chronicum_id)
    assert_nothing_written(chronicarius, dinner)


@MEMORY_ONLY
@pytest.mark.parametrize("field", ["chronicum_id", "actor", "content", "kind", "actor_kind"])
def test_none_is_refused(chronicarius, dinner, field):
    with pytest.raises(InvalidActum):
        record(chronicarius, field, None, FRESH)
    assert_nothing_written(chronicarius, dinner)


@MEMORY_ONLY
def test_no_owner_is_refused_as_empty(chronicarius, dinner):
    for owner in (None, ""):
        with pytest.raises(EmptyOwnerID):
            record(chronicarius, "owner", owner, FRESH)
    assert_nothing_written(chronicarius, dinner)


@MEMORY_ONLY
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("kind", "MESSAGE"),
        ("kind", "message'; DROP TABLE acta; --"),
        ("kind", ""),
        ("actor_kind", "robot"),
        ("actor_kind", "agent "),
        ("chronicum_id", ""),
        ("actor", ""),
        ("content", ""),
    ],
)
def test_unknown_kinds_and_empty_fields_are_refused(chronicarius, dinner, field, value):
    with pytest.raises(InvalidActum):
        record(chronicarius, field, value, FRESH)
    assert_nothing_written(chronicarius, dinner)


# -- round-trips ----------------------------------------------------------------

ASTRAL = {
    "chronicum_id": "🍽-dinner-friday-𝄞",
    "actor": "booking-🤖",
    "content": "Held 🍽 at 𠜎𠜱 for 👨‍👩‍👧‍👦, 🀄 after, \U0010ffff\U00010000.",
    "owner": "ardian-😀",
    "idempotency_key": "booking-reply-🔁",
}
SQL_METACHARACTERS = [
    "'; DROP TABLE acta; --",
    'Robert"); DELETE FROM chronica WHERE ("1"="1',
    "%s %(owner)s %% %d {0} {owner}",
    "$1 $$ E'\\n' \\x00 \\'",
    "/* comment */ -- rest",
    "' OR '1'='1",
    "back\\slash\\\\ and `tick` and ;",
]
CONTROL = "line\r\nbreaks\ttabs and \x1b escape"


@pytest.mark.parametrize("field", STRING_FIELDS)
def test_astral_plane_unicode_round_trips(chronicarius, dinner, field):
    owner, actum, key = reply_call(field, ASTRAL[field], chronicum_for(field, ASTRAL[field]))
    stored = chronicarius.record_actum(owner, actum, idempotency_key=key)
    assert_round_trip(chronicarius, owner, actum, key, stored)


def test_every_field_astral_at_once_round_trips(chronicarius):
    actum = Actum(
        chronicum_id=ASTRAL["chronicum_id"],
        kind="tool_response",
        actor_kind="agent",
        actor=ASTRAL["actor"],
        content=ASTRAL["content"],
    )
    stored = chronicarius.record_actum(
        ASTRAL["owner"], actum, idempotency_key=ASTRAL["idempotency_key"]
    )
    assert_round_trip(chronicarius, ASTRAL["owner"], actum, ASTRAL["idempotency_key"], stored)


@pytest.mark.parametrize("field", STRING_FIELDS)
@pytest.mark.parametrize("value", SQL_METACHARACTERS)
def test_sql_metacharacters_round_trip(chronicarius, dinner, field, value):
    owner, actum, key = reply_call(field, value, chronicum_for(field, value))
    stored = chronicarius.record_actum(owner, actum, idempotency_key=key)
    assert_round_trip(chronicarius, owner, actum, key, stored)
    # Both tables are still there and dinner-friday is untouched.
    chronicum, acta = dinner
    assert chronicarius.get_acta(OWNER, CHRONICUM)[: len(acta)] == acta
    assert chronicarius.get_chronicum(OWNER, CHRONICUM).started_at == chronicum.started_at


@pytest.mark.parametrize("field", ID_FIELDS)
@pytest.mark.parametrize("value", ["k" * 255, "🍽" * 255], ids=["ascii", "astral"])
def test_an_id_of_exactly_255_characters_round_trips(chronicarius, field, value):
    owner, actum, key = reply_call(field, value, chronicum_for(field, value))
    stored = chronicarius.record_actum(owner, actum, idempotency_key=key)
    assert_round_trip(chronicarius, owner, actum, key, stored)


TEN_MB = ('{"menu": "Rumah Teduh 🍽", "note": "\'quiet\' table; 50% off"}\n' * 200_000)[
    : 10 * 1024 * 1024
]


def menu(content: str = TEN_MB) -> Actum:
    return Actum(
        chronicum_id=CHRONICUM,
        kind="tool_response",
        actor_kind="agent",
        actor="search",
        content=content,
    )


@MEMORY_ONLY
def test_ten_megabytes_are_over_the_default_limit(chronicarius):
    with pytest.raises(InvalidActum, match=r"more than the limit of 4194304 .*MAX_ACTUM_BYTES"):
        chronicarius.record_actum(OWNER, menu(), idempotency_key="menu-1")
    with pytest.raises(ChronicumNotFound):
        chronicarius.get_chronicum(OWNER, CHRONICUM)


def test_ten_megabytes_of_content_round_trip_with_no_limit(store):
    # A tool response carrying a large document: 10 MiB of characters, some of them astral.
    chronicarius = Chronicarius(store, max_actum_bytes=None)
    stored = chronicarius.record_actum(OWNER, menu(), idempotency_key="menu-1")
    assert len(stored.content) == 10 * 1024 * 1024
    [read] = chronicarius.get_acta(OWNER, CHRONICUM)
    assert read.content == TEN_MB
    assert read == stored


def test_the_limit_counts_utf8_bytes_of_content_and_data(store):
    chronicarius = Chronicarius(store, max_actum_bytes=21)
    # 4 bytes of 🍽 + 2 of "é" + the 15 bytes of {"seat":"🍽"} is 21: just fits.
    fits = dataclasses.replace(menu("🍽é"), data={"seat": "🍽"})
    assert chronicarius.record_actum(OWNER, fits).data == {"seat": "🍽"}
    over = dataclasses.replace(fits, content="🍽éx")
    with pytest.raises(InvalidActum, match="22 bytes of UTF-8, more than the limit of 21"):
        chronicarius.record_actum(OWNER, over)
    assert len(chronicarius.get_acta(OWNER, CHRONICUM)) == 1


# -- identifiers: nothing a person cannot read, type or put in a URL -------------

CONTROL_CHARACTERS = ["\t", "\n", "\r", "\x1b", "\x7f", "\x85"]


@MEMORY_ONLY
@pytest.mark.parametrize("field", [*ID_FIELDS, "call_id"])
@pytest.mark.parametrize("char", CONTROL_CHARACTERS, ids=repr)
def test_a_control_character_in_an_identifier_is_refused(chronicarius, dinner, field, char):
    for chronicum_id in (FRESH, CHRONICUM):
        owner, actum, key = reply_call(field, f"booking{char}reply-1", chronicum_id)
        actum = dataclasses.replace(actum, kind="tool_response")
        with pytest.raises(InvalidActum, match=f"{NAMED.get(field, field)} contains the control"):
            chronicarius.record_actum(owner, actum, idempotency_key=key)
    assert_nothing_written(chronicarius, dinner)


def test_control_characters_round_trip_in_content(chronicarius, dinner):
    owner, actum, key = reply_call("content", CONTROL + "\u2028\u2029\x85")
    stored = chronicarius.record_actum(owner, actum, idempotency_key=key)
    assert_round_trip(chronicarius, owner, actum, key, stored)


UNADDRESSABLE = {
    "lone space": " ",
    "leading space": " dinner-friday",
    "trailing space": "dinner-friday ",
    "dot": ".",
    "dot dot": "..",
    "right-to-left override": "dinner-\u202eyadirf",
    "zero-width space": "dinner\u200bfriday",
    "line separator": "dinner\u2028friday",
    "byte order mark": "\ufeffdinner-friday",
    # Format characters (Cf) since rule 2 grew: each makes a second ID that reads
    # like one without it.
    "zero-width joiners": "dinner-👨\u200d👩\u200d👧\u200d👦",
    "tags": "dinner-🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",
    "zero-width non-joiner": "\u0634\u0627\u0645\u200c\u0641\u0631\u062f\u0627",
}


@MEMORY_ONLY
@pytest.mark.parametrize("chronicum_id", UNADDRESSABLE.values(), ids=UNADDRESSABLE.keys())
def test_a_chronicum_id_that_cannot_be_shown_or_addressed_is_refused(
    chronicarius, dinner, chronicum_id
):
    with pytest.raises(InvalidActum, match="chronicum_id"):
        record(chronicarius, "chronicum_id", chronicum_id, chronicum_id)
    with pytest.raises(InvalidActum, match="chronicum_id"):
        chronicarius.create_chronicum(OWNER, chronicum_id)
    assert_nothing_written(chronicarius, dinner)


@pytest.mark.parametrize(
    "chronicum_id",
    [
        "dinner friday",
        "dinner.friday",
        "ardian/dinner",
        "…",
        "dinner-👨👩👧👦",
        "\u0634\u0627\u0645 \u0641\u0631\u062f\u0627",
    ],
)
def test_a_chronicum_id_with_inner_spaces_dots_or_slashes_round_trips(chronicarius, chronicum_id):
    owner, actum, key = reply_call("chronicum_id", chronicum_id, chronicum_id)
    stored = chronicarius.record_actum(owner, actum, idempotency_key=key)
    assert_round_trip(chronicarius, owner, actum, key, stored)


# -- call_id and data -------------------------------------------------------------


@MEMORY_ONLY
@pytest.mark.parametrize("kind", ["message", "thought"])
def test_a_call_id_on_a_message_or_a_thought_is_refused(chronicarius, dinner, kind):
    with pytest.raises(InvalidActum, match=f"a {kind} cannot carry a call_id"):
        chronicarius.record_actum(
            OWNER, dataclasses.replace(scenario.booking_reply(), kind=kind, call_id="call-1")
        )
    assert_nothing_written(chronicarius, dinner)


@MEMORY_ONLY
def test_a_call_id_longer_than_255_characters_is_refused(chronicarius, dinner):
    with pytest.raises(InvalidActum, match="call_id is longer than 255"):
        chronicarius.record_actum(OWNER, dataclasses.replace(menu("[]"), call_id="c" * 256))
    assert_nothing_written(chronicarius, dinner)


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


NOT_JSON = {
    "NaN": float("nan"),
    "infinity": {"price": float("inf")},
    "minus infinity": [float("-inf")],
    "tuple": {"seats": (1, 2)},
    "int key": {4: "party"},
    "set": {"tables": {1, 2}},
    "bytes": b"Rumah Teduh",
    "object": [object()],
    "NUL in a string": {"name": "Rumah\x00Teduh"},
    "NUL in a key": {"na\x00me": "Rumah Teduh"},
    "lone surrogate": ["Rumah \ud83c Teduh"],
    "lone surrogate key": {"\udfff": 1},
    "too deep": _nested(100_000),
}


@MEMORY_ONLY
@pytest.mark.parametrize("data", NOT_JSON.values(), ids=NOT_JSON.keys())
def test_data_that_is_not_json_is_refused(chronicarius, dinner, data):
    for chronicum_id in (FRESH, CHRONICUM):
        actum = dataclasses.replace(menu("[]"), chronicum_id=chronicum_id, data=data)
        with pytest.raises(InvalidActum, match="data"):
            chronicarius.record_actum(OWNER if chronicum_id == CHRONICUM else FRESH, actum)
    assert_nothing_written(chronicarius, dinner)


def test_one_bad_actum_refuses_the_whole_batch(chronicarius, dinner):
    batch = [menu("[]"), dataclasses.replace(menu("[]"), data=float("nan")), menu("[]")]
    with pytest.raises(InvalidActum, match=r"^actum 1: data contains nan"):
        chronicarius.record_acta(OWNER, batch)
    with pytest.raises(InvalidActum, match=r"^actum 2: content is empty"):
        chronicarius.record_acta(
            OWNER, [*scenario.acta()[:2], dataclasses.replace(scenario.booking_reply(), content="")]
        )
    assert_nothing_written(chronicarius, dinner)


# -- reads ----------------------------------------------------------------------

UNREADABLE_IDS = ["dinner\x00friday", "dinner \ud83c friday", "d" * 256, "x" * 100_000]


@pytest.mark.parametrize("chronicum_id", UNREADABLE_IDS, ids=["nul", "surrogate", "256", "100k"])
def test_reading_an_id_no_store_can_hold_answers_not_found(chronicarius, dinner, chronicum_id):
    with pytest.raises(ChronicumNotFound):
        chronicarius.get_acta(OWNER, chronicum_id)
    with pytest.raises(ChronicumNotFound):
        chronicarius.get_chronicum(OWNER, chronicum_id)
    # A bad owner never sees dinner-friday, and never causes a database error.
    with pytest.raises(ChronicumNotFound):
        chronicarius.get_acta(chronicum_id, CHRONICUM)


@MEMORY_ONLY
@pytest.mark.parametrize("value", [None, 42, b"dinner-friday", ["dinner-friday"]], ids=repr)
def test_reading_with_an_id_of_the_wrong_type_is_a_value_error(chronicarius, dinner, value):
    with pytest.raises(ValueError):
        chronicarius.get_acta(OWNER, value)
    with pytest.raises(ValueError):
        chronicarius.get_chronicum(value, CHRONICUM)


@MEMORY_ONLY
@pytest.mark.parametrize(
    ("kinds", "actor_kinds", "last_n"),
    [
        (["message'; DROP TABLE acta; --"], None, 3),
        (None, ["human) OR (1=1"], 3),
        (["message"], None, "3; DROP TABLE acta"),
        (["message"], None, 3.5),
        ([None], None, 0),
    ],
)
def test_a_bad_query_is_a_value_error(chronicarius, dinner, kinds, actor_kinds, last_n):
    with pytest.raises(ValueError):
        chronicarius.get_acta(OWNER, CHRONICUM, kinds=kinds, actor_kinds=actor_kinds, last_n=last_n)
    assert_nothing_written(chronicarius, dinner)


def _bad_data():
    return float("nan")


EVERY_REFUSAL = {
    "NUL in content": ("content", "Rumah\x00Teduh"),
    "lone surrogate in actor": ("actor", "Rumah \ud83c Teduh"),
    "256-character chronicum ID": ("chronicum_id", "d" * 256),
    "content of the wrong type": ("content", 42),
    "no actor": ("actor", None),
    "empty owner": ("owner", ""),
    "unknown kind": ("kind", "memo"),
    "control character in an ID": ("chronicum_id", "dinner\x07friday"),
    "call_id on a message": ("call_id", "call-1"),
    "data that is not JSON": ("data", _bad_data()),
}


def test_every_refusal_writes_nothing_on_either_store(chronicarius, dinner):
    """One case of each table above, on both stores: refused with chronica's error,
    never a database error, and nothing written, into a new chronicum or an old one."""
    for field, value in EVERY_REFUSAL.values():
        for chronicum_id in (FRESH, CHRONICUM):
            with pytest.raises((InvalidActum, EmptyOwnerID, ValueError)):
                record(chronicarius, field, value, chronicum_id)
    with pytest.raises(InvalidActum):
        Chronicarius(chronicarius.store).record_actum(OWNER, menu(), idempotency_key="menu-1")
    assert_nothing_written(chronicarius, dinner)
