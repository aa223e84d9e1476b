"""Bad input in every field of the booking agent's reply, on both stores.

Every value either round-trips exactly or is refused with InvalidActum before
anything is written: no new chronicum, no actum, no bumped last_activity_at, and
never a database error.
"""

from __future__ import annotations

import pytest

from chronica import Actum, ChronicumNotFound, EmptyOwnerID, InvalidActum

from . import scenario
from .scenario import BOOKING_REPLY, CHRONICUM, OWNER, A, M

KEY = "booking-reply-1"
FRESH = "dinner-saturday"
STRING_FIELDS = ["chronicum_id", "actor", "content", "owner", "idempotency_key"]
ID_FIELDS = ["chronicum_id", "actor", "owner", "idempotency_key"]
NAMED = {"owner": "owner_id"}  # how InvalidActum's message names a field


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


@pytest.mark.parametrize("field", STRING_FIELDS)
@pytest.mark.parametrize("bad", REFUSED_TEXT)
def test_text_no_database_can_keep_is_refused(chronicarius, dinner, field, bad):
    for chronicum_id in (FRESH, CHRONICUM):
        with pytest.raises(InvalidActum, match=NAMED.get(field, field)):
            record(chronicarius, field, REFUSED_TEXT[bad], chronicum_id)
    assert_nothing_written(chronicarius, dinner)


@pytest.mark.parametrize("field", ID_FIELDS)
def test_an_id_longer_than_255_characters_is_refused(chronicarius, dinner, field):
    for long_value in ("k" * 256, "🍽" * 256, "x" * 100_000):
        for chronicum_id in (FRESH, CHRONICUM):
            with pytest.raises(InvalidActum, match=f"{NAMED.get(field, field)} is longer than 255"):
                record(chronicarius, field, long_value, chronicum_id)
    assert_nothing_written(chronicarius, dinner)


WRONG_TYPES = [42, 4.2, True, b"booking", ["booking"], {"actor": "booking"}, object()]


@pytest.mark.parametrize("field", [*STRING_FIELDS, "kind", "actor_kind"])
@pytest.mark.parametrize("value", WRONG_TYPES, ids=lambda v: type(v).__name__)
def test_a_field_of_the_wrong_type_is_refused(chronicarius, dinner, field, value):
    for chronicum_id in (FRESH, CHRONICUM):
        with pytest.raises(InvalidActum):
            record(chronicarius, field, value, chronicum_id)
    assert_nothing_written(chronicarius, dinner)


@pytest.mark.parametrize("field", ["chronicum_id", "actor", "content", "kind", "actor_kind"])
def test_none_is_refused(chronicarius, dinner, field):
    with pytest.raises(InvalidActum):
        record(chronicarius, field, None, FRESH)
    assert_nothing_written(chronicarius, dinner)


def test_no_owner_is_refused_as_empty(chronicarius, dinner):
    for owner in (None, ""):
        with pytest.raises(EmptyOwnerID):
            record(chronicarius, "owner", owner, FRESH)
    assert_nothing_written(chronicarius, dinner)


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
    "line\r\nbreaks\ttabs\u2028\u2029 and \x1b escape",
]


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


def test_ten_megabytes_of_content_round_trip(chronicarius):
    # A tool response carrying a large document: 10 MiB of characters, some of them astral.
    content = ('{"menu": "Rumah Teduh 🍽", "note": "\'quiet\' table; 50% off"}\n' * 200_000)[
        : 10 * 1024 * 1024
    ]
    actum = Actum(
        chronicum_id=CHRONICUM,
        kind="tool_response",
        actor_kind="agent",
        actor="search",
        content=content,
    )
    stored = chronicarius.record_actum(OWNER, actum, idempotency_key="menu-1")
    assert len(stored.content) == 10 * 1024 * 1024
    [read] = chronicarius.get_acta(OWNER, CHRONICUM)
    assert read.content == content
    assert read == stored


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


@pytest.mark.parametrize("value", [None, 42, b"dinner-friday", ["dinner-friday"]], ids=repr)
def test_reading_with_an_id_of_the_wrong_type_is_a_value_error(chronicarius, dinner, value):
    with pytest.raises(ValueError):
        chronicarius.get_acta(OWNER, value)
    with pytest.raises(ValueError):
        chronicarius.get_chronicum(value, CHRONICUM)


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
