"""``actum_wire``, the acta of the API's answers, against ``ActumSerializer``, which
the OpenAPI schema documents: one list of fields, the same values."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.test import override_settings
from django.utils import timezone
from rest_framework.settings import api_settings

from chronica import ActorKind, Actum, ActumKind, Redaction
from chronica.api.serializers import ActumSerializer
from chronica.api.wire import ACTUM_FIELDS, acta_wire, actum_wire
from chronica.validation.jsondata import RawJSON

AT = dt.datetime(2026, 3, 6, 19, 30, 5, 123456, tzinfo=dt.UTC)

ACTA = [
    Actum(
        chronicum_id="c-1",
        kind=ActumKind.MESSAGE,
        actor_kind=ActorKind.HUMAN,
        actor="ardian",
        content="table for four at eight?",
        id="a-1",
        at=AT,
        recorded_by="owner",
    ),
    Actum(
        chronicum_id="c-1",
        kind=ActumKind.TOOL_REQUEST,
        actor_kind=ActorKind.AGENT,
        actor="booking",
        content="",
        id="a-2",
        at=AT + dt.timedelta(hours=1),
        call_id="call-1",
        data={"name": "book", "args": {"seats": 4}, "note": "\u2028"},
        recorded_by="credential:k1",
    ),
    Actum(
        chronicum_id="c-1",
        kind="thought",
        actor_kind="agent",
        actor="booking",
        content="hm",
        id="a-3",
        data=[1, None],
    ),
    Actum(
        chronicum_id="c-1",
        kind="message",
        actor_kind="human",
        actor="ardian",
        content="raw",
        id="a-4",
        at=AT,
        data=RawJSON("[1,2]"),
    ),
    Actum(
        chronicum_id="c-1",
        kind="message",
        actor_kind="human",
        actor="ardian",
        content="",
        id="a-5",
        at=AT.replace(microsecond=0),
        redacted=Redaction(AT + dt.timedelta(days=1), "asked"),
    ),
    # Kinds no member has (a store of one's own can hand them back): as they are.
    Actum(
        chronicum_id="c-1",
        kind="dream",
        actor_kind="ghost",
        actor="booking",
        content="",
        id="a-6",
        at=AT,
    ),
]


def test_the_keys_are_the_serializers_fields_in_their_order():
    fields = list(ActumSerializer().fields)
    assert list(ACTUM_FIELDS) == fields
    for actum in ACTA:
        assert list(actum_wire(actum)) == fields


def _same(actum: Actum) -> None:
    drf = dict(ActumSerializer(actum).data)
    for ours in (actum_wire(actum), acta_wire([actum])[0]):
        assert ours == drf
        assert [type(v) for v in ours.values()] == [type(v) for v in drf.values()]


@pytest.mark.parametrize("actum", ACTA, ids=lambda a: a.id)
def test_the_values_are_the_serializers(actum):
    _same(actum)


@pytest.mark.parametrize(
    "settings",
    [
        {"TIME_ZONE": "Europe/Tirane"},
        {"USE_TZ": False},
        {"REST_FRAMEWORK": {"DATETIME_FORMAT": "%Y-%m-%d %H:%M"}},
        {"REST_FRAMEWORK": {"DATETIME_FORMAT": None}},
    ],
)
def test_the_time_follows_the_projects_settings_as_drf_does(settings):
    with override_settings(**settings):
        try:
            for actum in ACTA:
                _same(actum)
        finally:
            api_settings.reload()


@pytest.mark.parametrize("zone", ["America/St_Johns", "Asia/Kathmandu", "UTC"])
def test_the_time_is_in_the_current_time_zone_as_drf_writes_it(zone):
    with timezone.override(zone):
        for actum in ACTA:
            _same(actum)


def test_a_time_out_of_range_in_the_time_zone_is_drfs_error():
    late = Actum(
        chronicum_id="c-1",
        kind="message",
        actor_kind="human",
        actor="a",
        id="a-6",
        at=dt.datetime.max.replace(tzinfo=dt.UTC),
    )
    with timezone.override("Asia/Tokyo"):
        with pytest.raises(Exception) as drf:
            _ = ActumSerializer(late).data
        with pytest.raises(type(drf.value)) as ours:
            acta_wire([late])
    assert str(ours.value) == str(drf.value)


def test_the_json_is_the_serializers():
    plain = [a for a in ACTA if not isinstance(a.data, RawJSON)]
    assert json.dumps(acta_wire(plain)) == json.dumps(ActumSerializer(plain, many=True).data)
