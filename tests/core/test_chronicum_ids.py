"""Rule 2, more: a chronicum ID is one name, shown one way.

IDs are global: "dinner-friday" with a no-break space, a Hangul filler or a
variation selector in it reads exactly like rafa's "dinner-friday" and is another
ID, and "café" typed as e + a combining accent is another ID than "café" typed
with é. Every write and every create refuses such an ID with InvalidActum (a
ValueError) before anything is stored, and the API answers 400 JSON. A read of
one finds nothing chronica could have stored (ChronicumNotFound, 404); a
chronicum stored before this rule (or by the Go seed writer) stays readable and
deletable by its owner.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import sys
import unicodedata

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from chronica import Chronicum, ChronicumNotFound, InvalidActum
from chronica.services import Chronicarius
from chronica.stores.memory import InMemoryStore
from chronica.values import StateChange

from .. import scenario
from ..scenario import CHRONICUM, OWNER

CAFE_NFC = "caf\u00e9-friday"
CAFE_NFD = "cafe\u0301-friday"

# The examples, and the characters of the same kinds most often abused.
LOOK_ALIKE = {
    "tag latin capital letter A (U+E0041)": "dinner\U000e0041-friday",
    "hangul filler (U+3164)": "dinner\u3164-friday",
    "combining grapheme joiner (U+034F)": "dinner\u034f-friday",
    "variation selector-16 (U+FE0F)": "dinner\ufe0f-friday",
    "no-break space (U+00A0)": "dinner\u00a0friday",
    "zero-width space (U+200B)": "dinner\u200bfriday",
    "word joiner (U+2060)": "dinner\u2060-friday",
    "byte order mark inside (U+FEFF)": "dinner\ufeff-friday",
    "mongolian vowel separator (U+180E)": "dinner\u180e-friday",
    "narrow no-break space (U+202F)": "dinner\u202ffriday",
    "figure space (U+2007)": "dinner\u2007friday",
    "variation selector-1 (U+FE00)": "dinner\ufe00-friday",
    "variation selector-17 (U+E0100)": "dinner\U000e0100-friday",
    "variation selector-256 (U+E01EF)": "dinner\U000e01ef-friday",
    "language tag (U+E0001)": "dinner\U000e0001-friday",
    "cancel tag (U+E007F)": "dinner\U000e007f-friday",
    "zero-width joiner (U+200D)": "dinner\u200d-friday",
    "zero-width non-joiner (U+200C)": "dinner\u200c-friday",
    "halfwidth hangul filler (U+FFA0)": "dinner\uffa0-friday",
    "hangul choseong filler (U+115F)": "dinner\u115f-friday",
    "braille pattern blank (U+2800)": "dinner\u2800-friday",
    "flag of England (tags)": "dinner-🏴"
    + "".join(chr(0xE0000 + ord(c)) for c in "gbeng")
    + "\U000e007f",
    "emoji with VS16": "dinner-\u2764\ufe0f",
    "NFD café": CAFE_NFD,
}

RANGES = {
    "variation selectors U+FE00-FE0F": range(0xFE00, 0xFE10),
    "variation selectors U+E0100-E01EF": range(0xE0100, 0xE01F0),
    "tag characters U+E0000-E007F": range(0xE0000, 0xE0080),
    "Mongolian free variation selectors U+180B-180F": range(0x180B, 0x1810),
    "every format character (Cf) this Python knows": [
        c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"
    ],
}


def actum(chronicum_id: str = CHRONICUM, content: str = scenario.BOOKING_REPLY):
    return scenario.booking_reply(content, chronicum_id=chronicum_id)


@pytest.fixture
def dinner(chronicarius):
    """ardian's dinner-friday with its seven acta, before the bad writes."""
    for each in scenario.acta():
        chronicarius.record_actum(OWNER, each)
    return chronicarius.get_chronicum(OWNER, CHRONICUM), chronicarius.get_acta(OWNER, CHRONICUM)


def assert_nothing_written(chronicarius, dinner, chronicum_id):
    chronicum, acta = dinner
    assert chronicarius.get_chronicum(OWNER, CHRONICUM) == chronicum
    assert chronicarius.get_acta(OWNER, CHRONICUM) == acta
    assert chronicarius.list_chronica(OWNER) == [chronicum]
    with pytest.raises(ChronicumNotFound):
        chronicarius.store.get(chronicum_id)


def writes(chronicarius, chronicum_id):
    """Every way of writing into (or creating) ``chronicum_id``."""
    yield "record_actum", lambda: chronicarius.record_actum(OWNER, actum(chronicum_id))
    yield (
        "keyed",
        lambda: chronicarius.record_actum(OWNER, actum(chronicum_id), idempotency_key="k"),
    )
    yield "batch", lambda: chronicarius.record_acta(OWNER, scenario.acta(chronicum_id))
    yield (
        "keyed batch",
        lambda: chronicarius.record_acta(OWNER, scenario.acta(chronicum_id), idempotency_key="k"),
    )
    yield "create_chronicum", lambda: chronicarius.create_chronicum(OWNER, chronicum_id)
    if not getattr(chronicarius.store, "supports_state", False):
        return
    yield (
        "update_state(create=True)",
        lambda: chronicarius.update_state(
            OWNER, chronicum_id, [StateChange(namespace="adk", set={"step": 1})], create=True
        ),
    )


# One test per store for all the examples (not one each): a database test's teardown
# costs more than the examples.


def test_every_write_refuses_an_id_with_an_invisible_format_or_filler_character(
    chronicarius, dinner
):
    for example, chronicum_id in LOOK_ALIKE.items():
        for name, write in writes(chronicarius, chronicum_id):
            with pytest.raises(InvalidActum, match="chronicum_id") as refused:
                write()
            assert isinstance(refused.value, ValueError), (example, name)
        assert_nothing_written(chronicarius, dinner, chronicum_id)


async def test_the_async_writes_refuse_it_too(chronicarius):
    for chronicum_id in LOOK_ALIKE.values():
        with pytest.raises(InvalidActum, match="chronicum_id"):
            await chronicarius.arecord_actum(OWNER, actum(chronicum_id))
        with pytest.raises(InvalidActum, match="chronicum_id"):
            await chronicarius.arecord_acta(OWNER, scenario.acta(chronicum_id), idempotency_key="k")
        with pytest.raises(InvalidActum, match="chronicum_id"):
            await chronicarius.acreate_chronicum(OWNER, chronicum_id)


def test_a_read_of_such_an_id_finds_nothing(chronicarius, dinner):
    for chronicum_id in LOOK_ALIKE.values():
        with pytest.raises(ChronicumNotFound):
            chronicarius.get_chronicum(OWNER, chronicum_id)
        with pytest.raises(ChronicumNotFound):
            chronicarius.get_acta(OWNER, chronicum_id)
        with pytest.raises(ChronicumNotFound):
            chronicarius.delete_chronicum(OWNER, chronicum_id)


@pytest.mark.parametrize("name", RANGES)
def test_every_character_of_the_ranges_is_refused(name):
    chronicarius = Chronicarius(InMemoryStore())
    for code in RANGES[name]:
        chronicum_id = f"dinner{chr(code)}-friday"
        with pytest.raises(InvalidActum, match=f"U\\+{code:04X}"):
            chronicarius.create_chronicum(OWNER, chronicum_id)
        with pytest.raises(InvalidActum, match=f"U\\+{code:04X}"):
            chronicarius.record_actum(OWNER, actum(chronicum_id))
    assert chronicarius.list_chronica(OWNER) == []


def test_the_message_names_the_character_and_what_it_is():
    chronicarius = Chronicarius(InMemoryStore())
    with pytest.raises(InvalidActum, match=r"U\+00A0 \(NO-BREAK SPACE\)"):
        chronicarius.create_chronicum(OWNER, "dinner\u00a0friday")
    with pytest.raises(InvalidActum, match=r"U\+3164 \(HANGUL FILLER\)"):
        chronicarius.create_chronicum(OWNER, "dinner\u3164friday")
    with pytest.raises(InvalidActum, match=r"U\+E0041 \(TAG LATIN CAPITAL LETTER A\)"):
        chronicarius.create_chronicum(OWNER, "dinner\U000e0041friday")


def test_nfd_is_refused_and_the_message_gives_the_nfc_spelling(chronicarius, dinner):
    with pytest.raises(InvalidActum, match="not in Unicode NFC") as refused:
        chronicarius.record_actum(OWNER, actum(CAFE_NFD))
    assert repr(CAFE_NFC) in str(refused.value)
    assert_nothing_written(chronicarius, dinner, CAFE_NFD)
    stored = chronicarius.record_actum(OWNER, actum(CAFE_NFC))
    assert chronicarius.get_acta(OWNER, CAFE_NFC) == [stored]
    with pytest.raises(ChronicumNotFound):
        chronicarius.get_acta(OWNER, CAFE_NFD)


READABLE = [
    CAFE_NFC,
    "dinner friday",
    "ディナー金曜",
    "ужин-пятница",
    "dinner-🍜",
    "dinner-👍🏽",  # a skin tone modifier is a symbol, not a selector
    "한국어-저녁",  # Hangul syllables, not fillers
]


def test_readable_ids_in_any_script_still_round_trip(chronicarius):
    for chronicum_id in READABLE:
        stored = chronicarius.record_actum(OWNER, actum(chronicum_id))
        assert chronicarius.get_acta(OWNER, chronicum_id) == [stored]
        assert chronicarius.get_chronicum(OWNER, chronicum_id).id == chronicum_id


ACTORS = ["booking\u00a0agent", "booking-\u2764\ufe0f", "book\u200dking", "cafe\u0301"]


def test_actors_and_owners_keep_the_rules_they_had(chronicarius):
    """Only chronicum IDs are global names: an actor is named inside one owner's
    chronicum, and an owner is what the app's sign-in says. Both keep rule 2 as
    before (no control character, no NUL), nothing more."""
    for n, actor in enumerate(ACTORS):
        chronicum_id = f"dinner-friday-{n}"
        stored = chronicarius.record_actum(
            actor, dataclasses.replace(actum(chronicum_id), actor=actor)
        )
        assert stored.actor == actor
        assert chronicarius.get_acta(actor, chronicum_id) == [stored]


def test_a_chronicum_stored_before_the_rule_stays_readable_and_deletable(store):
    """An ID written before this rule, or by the Go seed writer, is still its owner's
    to read and to erase; only new writes into it are refused."""
    chronicarius = Chronicarius(store)
    friday = dt.datetime(2025, 5, 2, 19, 0, tzinfo=dt.UTC)
    old = Chronicum(CAFE_NFD, OWNER, friday, friday)
    store.create(old)
    assert chronicarius.get_chronicum(OWNER, CAFE_NFD) == old
    assert chronicarius.get_acta(OWNER, CAFE_NFD) == []
    with pytest.raises(InvalidActum, match="not in Unicode NFC"):
        chronicarius.record_actum(OWNER, actum(CAFE_NFD))
    with pytest.raises(ChronicumNotFound):
        chronicarius.get_chronicum("rafa", CAFE_NFD)
    chronicarius.delete_chronicum(OWNER, CAFE_NFD)
    with pytest.raises(ChronicumNotFound):
        chronicarius.get_chronicum(OWNER, CAFE_NFD)


# -- over HTTP ----------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_api_answers_400_json_to_a_write_and_404_to_a_read(ardian):
    client = APIClient()
    client.force_authenticate(ardian)
    for chronicum_id in LOOK_ALIKE.values():
        assert_refused_over_http(client, chronicum_id)
    assert client.get(reverse("chronica:chronicum-list")).json()["results"] == []


def assert_refused_over_http(client, chronicum_id):
    acta_url = reverse("chronica:chronicum-acta", args=[chronicum_id])
    body = {"kind": "message", "actor_kind": "agent", "actor": "booking", "content": "Held."}
    for payload in (body, [body, body]):
        for headers in ({}, {"Idempotency-Key": "booking-reply-1"}):
            answer = client.post(acta_url, payload, format="json", headers=headers)
            assert answer.status_code == 400, answer.content
            assert "chronicum_id" in answer.json()["detail"]
    created = client.post(reverse("chronica:chronicum-list"), {"id": chronicum_id}, format="json")
    assert created.status_code == 400
    assert "chronicum_id" in created.json()["detail"]
    missing = client.get(reverse("chronica:chronicum-detail", args=["no-such-chronicum"]))
    for url in (reverse("chronica:chronicum-detail", args=[chronicum_id]), acta_url):
        answer = client.get(url)
        assert (answer.status_code, answer.json()) == (404, missing.json())
