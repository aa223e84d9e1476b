"""Rows become acta (``chronica.stores.db.rows``): the same Actum however it is built
(frozen after an ``UnfrozenActum``, or by the slot setters where this Python would not
allow the ``__class__`` assignment), and the same time in every form a database hands
it over, whatever the PostgreSQL session's TimeZone and DateStyle."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from django.db import connection

from chronica import services, values
from chronica.stores.db import rows
from chronica.values import ActorKind, Actum, ActumKind, UnfrozenActum

from .. import scenario

OWNER = "ardian"
AT = dt.datetime(2026, 12, 2, 20, 24, 16, 921556, tzinfo=dt.UTC)
MICROS = (AT - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(microseconds=1)


def row(at, data=None) -> tuple:
    return ("id-1", "tool_request", "agent", "search", "find a table", at, "call-1", data, None)


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


@pytest.fixture(params=[True, False], ids=["refrozen", "slot-setters"])
def building(request, monkeypatch):
    """Both ways of building acta: the UnfrozenActum frozen, and the slot setters."""
    monkeypatch.setattr(values, "REFREEZES", request.param)
    monkeypatch.setattr(rows, "REFREEZES", request.param)
    return request.param


@pytest.mark.parametrize(
    "at",
    [
        MICROS,  # epoch microseconds (PostgreSQL's functions 0007)
        "2026-12-02T20:24:16.921556+00:00",  # PostgreSQL's reads (ISO_AT)
        "2026-12-02 20:24:16.921556",  # SQLite's text, naive UTC
        "2026-12-02T22:24:16.921556+02:00",  # another offset: the same instant
        AT,  # a datetime
        AT.replace(tzinfo=None),  # MySQL's naive UTC datetime
    ],
)
def test_a_row_is_the_same_actum_however_it_is_built(building, at):
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
    assert rows.actum("dinner", row(at)) == dataclasses.replace(EXPECTED, data=None)


def test_a_window_is_built_oldest_first(building):
    newest_first = [row(MICROS + n) for n in (3, 2, 1)]
    assert [a.at for a in rows.acta_newest_first("dinner", newest_first)] == [
        AT + dt.timedelta(microseconds=n) for n in (1, 2, 3)
    ]


def test_an_unfrozen_actum_has_actums_slots_and_never_leaves_a_store():
    assert UnfrozenActum.__slots__ == Actum.__slots__
    assert values.REFREEZES  # this CPython allows the assignment
    acta = rows.acta_of("dinner", [row(MICROS)] * 3)
    assert {type(a) for a in acta} == {Actum}


@pytest.mark.django_db
def test_the_times_read_back_whatever_the_sessions_timezone_and_datestyle():
    """PostgreSQL's reads format an actum's time themselves (UTC, ISO 8601): a session
    in another TimeZone and DateStyle reads the same acta (elsewhere: nothing to set)."""
    stored = services.record_acta(OWNER, scenario.acta())
    chronicum_id = stored[0].chronicum_id
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET TIME ZONE 'America/St_Johns'")  # UTC-03:30
            cursor.execute("SET DateStyle = 'SQL, DMY'")
    try:
        assert services.get_acta(OWNER, chronicum_id) == stored
        assert services.get_acta(OWNER, chronicum_id, last_n=2) == stored[-2:]
        assert services.get_acta(OWNER, chronicum_id, max_tokens=10**6) == stored
        assert services.pop_actum(OWNER, chronicum_id) == stored[-1]
    finally:
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("RESET DateStyle")
                cursor.execute("SET TIME ZONE 'UTC'")
