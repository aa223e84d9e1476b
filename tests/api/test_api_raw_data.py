"""The API's JSON answers carry ``data`` as stored, never decoded (issue 20 item 2):
the same answer as decoding it and rendering it with DRF's ``JSONRenderer``.

Byte for byte for ordinary values; for numbers a database spells its own way
(PostgreSQL's ``jsonb`` keeps decimals: ``1e-07`` comes back ``0.0000001``; a float
of 1e16 or more is stored written out, ``1e100`` as its 101 digits and ``.0``), the
same JSON value of the same type.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.renderers import JSONRenderer
from rest_framework.test import APIClient

from chronica import Actum, services
from chronica.api.renderers import dumps
from chronica.api.serializers import ActumSerializer
from chronica.api.stream import event
from chronica.validation import RawJSON, compact_json

from ..scenario import CHRONICUM
from .test_api import acta_url, as_ardian

__all__ = ["as_ardian"]  # fixture

ORDINARY: list[Any] = [
    None,
    {},
    [],
    "",
    0,
    -5,
    2**62,
    10**30,
    1.0,
    0.5,
    -2.25,
    123.456,
    True,
    False,
    "a, b: c",
    'quote " backslash \\ newline \n tab \t bell \x07 del \x7f',
    "é 日本 🎉 \u2028 \u2029",
    [[], {}, [[[]]], [1, [2, [3]]]],
    {"nested": {"a": [1, 2, {"b": None}]}, "z": True, "a": False, "k, ": ": v"},
    {"\u2028 key": "\\", "": 1.5, "long key name": [", ", ": ", '", "']},
]

SPELT_OWN_WAY: list[Any] = [1e100, 1e16, -1e22, 1e-7, 5e-324, 1.7976931348623157e308, [1e100]]


def typed(value: Any) -> Any:
    """``value`` with each number tagged with its type: 1.0 and 1 are different JSON."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return (type(value).__name__, value)
    if isinstance(value, list):
        return [typed(v) for v in value]
    return {k: typed(v) for k, v in value.items()}


def record(owner: str, values: list[Any]) -> list[Actum]:
    acta = [
        Actum(
            chronicum_id=CHRONICUM,
            kind="tool_response",
            actor_kind="agent",
            actor="search",
            content=f"value {n}",
            data=value,
        )
        for n, value in enumerate(values)
    ]
    return services.record_acta(owner, acta)


def decoded_answer(owner: str) -> bytes:
    """The window as the API answered it before: decoded data, DRF's JSONRenderer."""
    acta = services.get_acta(owner, CHRONICUM)
    return JSONRenderer().render(ActumSerializer(acta, many=True).data)


@pytest.mark.django_db
class TestRawData:
    def test_ordinary_values_byte_for_byte(self, as_ardian: APIClient, ardian) -> None:
        record(str(ardian.pk), ORDINARY)
        response = as_ardian.get(acta_url())

        assert response.status_code == 200
        assert response.content == decoded_answer(str(ardian.pk))
        assert [a["data"] for a in response.json()] == ORDINARY

    def test_numbers_a_database_spells_its_own_way(self, as_ardian: APIClient, ardian) -> None:
        record(str(ardian.pk), SPELT_OWN_WAY)
        response = as_ardian.get(acta_url())

        assert typed(json.loads(response.content)) == typed(
            json.loads(decoded_answer(str(ardian.pk)))
        )
        assert typed([a["data"] for a in response.json()]) == typed(SPELT_OWN_WAY)

    def test_the_python_api_still_decodes(self, ardian) -> None:
        record(str(ardian.pk), ORDINARY)
        acta = services.get_acta(str(ardian.pk), CHRONICUM)
        assert [a.data for a in acta] == ORDINARY
        assert not any(isinstance(a.data, RawJSON) for a in acta)

    def test_a_stream_event_is_the_windows_actum(self, ardian) -> None:
        record(str(ardian.pk), [*ORDINARY, *SPELT_OWN_WAY])
        decoded = services.get_acta(str(ardian.pk), CHRONICUM)
        raw = services.get_acta_page(str(ardian.pk), CHRONICUM, raw_data=True).acta
        assert all(isinstance(a.data, RawJSON) for a in raw if a.data is not None)
        for plain, spliced in zip(decoded, raw, strict=True):
            # The events cache is by actum: a different one for each read.
            assert event(spliced).startswith(f"id: {plain.id}\ndata: ".encode())
            sent = event(spliced).split(b"data: ", 1)[1].strip()
            assert typed(json.loads(sent)) == typed(json.loads(event(plain).split(b"data: ")[1]))


@pytest.mark.parametrize("value", [*ORDINARY, *SPELT_OWN_WAY])
def test_compact_json_is_what_dumps_writes(value: Any) -> None:
    # PostgreSQL's jsonb prints ", " and ": " between tokens; compact_json takes them
    # out and leaves strings alone.
    spaced = json.dumps(value, ensure_ascii=False)
    assert compact_json(spaced) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert dumps(RawJSON(compact_json(spaced))) == dumps(value)
    # As a store hands it back: the printed text kept, compacted when first written.
    stored = RawJSON.as_stored(spaced)
    assert stored.stored == spaced
    assert stored == RawJSON(compact_json(spaced))
    assert dumps(stored) == dumps(value)


def test_indented_as_the_browsable_api_indents() -> None:
    page = [{"id": "a", "data": value, "n": [1, {"k: v": []}]} for value in ORDINARY]
    spliced = [{**actum, "data": RawJSON(dumps(actum["data"]))} for actum in page]
    drf = JSONRenderer().render(page, renderer_context={"indent": 4}).decode()
    # Decoded values: DRF's own indented answer; data as stored: the same, data compact.
    assert dumps(page, indent=4) == drf
    assert json.loads(dumps(spliced, indent=4)) == json.loads(drf)


@pytest.mark.django_db
def test_the_browsable_api_shows_data_as_stored(as_ardian: APIClient, ardian) -> None:
    record(str(ardian.pk), [[[]] * 3, {"a, b": "c: d"}])
    response = as_ardian.get(acta_url(), HTTP_ACCEPT="text/html")

    assert response.status_code == 200
    content = response.content.decode()
    assert "&quot;data&quot;: [[],[],[]]" in content
    assert "&quot;data&quot;: {&quot;a, b&quot;:&quot;c: d&quot;}" in content
