"""Rows become acta (``chronica.stores.db.rows``): the same time in every form a
database hands it over."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from chronica.stores.db import rows
from chronica.values import ActorKind, Actum, ActumKind

OWNER = "ardian"
AT = dt.datetime(2026, 12, 2, 20, 24, 16, 921556, tzinfo=dt.UTC)


def row(at, data=None) -> tuple:
    # (recorded_by, compacts, redacted_at and redacted_reason: NULL)
    return (
        "id-1",
        "tool_request",
        "agent",
        "search",
        "find a table",
        at,
        "call-1",
        data,
        None,
        None,
        None,
        None,
    )


def test_a_redacted_row_says_when_and_why():
    redacted = (*row(AT)[:10], "2026-12-03 08:00:00", "a card number")
    (actum,) = rows.acta_of("dinner", [redacted])
    assert actum.redacted.at == dt.datetime(2026, 12, 3, 8, tzinfo=dt.UTC)
    assert actum.redacted.reason == "a card number"


EXPECTED = Actum(
    chronicum_id="dinner",
    kind=ActumKind.TOOL_REQUEST,
    actor_kind=ActorKind.AGENT,
    actor="search",
    content="find a table",
    id="id-1",
    at=AT,
    call_id="call-1",
    data={"q": "table for 4", "n": [1, 2.5, None]},
)


@pytest.mark.parametrize(
    "at",
    [
        "2026-12-02T20:24:16.921556+00:00",  # ISO 8601 text
        "2026-12-02 20:24:16.921556",  # SQLite's text, naive UTC
        "2026-12-02T22:24:16.921556+02:00",  # another offset: the same instant
        AT,  # a datetime
        AT.replace(tzinfo=None),  # MySQL's naive UTC datetime
    ],
)
def test_a_row_is_the_same_actum_whatever_form_its_time_takes(at):
    got = rows.acta_of("dinner", [row(at, '{"q": "table for 4", "n": [1, 2.5, null]}')])
    assert got == [EXPECTED]
    (actum,) = got
    assert type(actum) is Actum
    assert actum.at == AT
    assert actum.at.tzinfo is dt.UTC
    with pytest.raises(dataclasses.FrozenInstanceError):
        actum.content = "changed"  # type: ignore[misc]
    assert dataclasses.replace(actum) == actum
    assert repr(actum) == repr(EXPECTED)
    assert rows.acta_of("dinner", [row(at)]) == [dataclasses.replace(EXPECTED, data=None)]
