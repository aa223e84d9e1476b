"""``CHRONICA["API_MAX_RESPONSE_BYTES"]`` counts the bytes of the answer as it is sent,
whatever representation was asked: ``Accept: application/json; indent=8`` included.

Indented, a ``data`` of deep containers grows with the square of its depth (each
level a line, each line the level's indentation): one 2.4 MB actum answered about a
gigabyte. chronica indents its own fields and writes ``data`` as stored, compact, and
counts each byte of the indented answer.
"""

from __future__ import annotations

import json

import pytest
from django.test import override_settings
from hypothesis import given
from hypothesis import strategies as st
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.test import APIClient

from chronica import Actum, services
from chronica.api.renderers import JSONArray

from ..scenario import CHRONICUM
from .test_api import acta_url, as_ardian

__all__ = ["as_ardian"]  # fixture

INDENTED = "application/json; indent=8"


def nested(depth: int) -> object:
    """``[[[...]]]``, ``depth`` levels: 2 bytes a level compact, about 8 x level indented."""
    value: object = []
    for _ in range(depth):
        value = [value]
    return value


def deep_actum(n: int, depth: int = 190, copies: int = 10) -> Actum:
    return Actum(
        chronicum_id=CHRONICUM,
        kind="tool_response",
        actor_kind="agent",
        actor="search",
        content=f"result {n}",
        data=[nested(depth)] * copies,
    )


def get(client: APIClient, accept: str, query: str = ""):
    response = client.get(acta_url() + query, HTTP_ACCEPT=accept)
    assert response.status_code == 200, response.content[:300]
    return response


@pytest.mark.django_db
class TestIndent:
    def test_an_indented_answer_holds_the_same_acta_in_the_budget(self, as_ardian, ardian):
        services.record_acta(str(ardian.pk), [deep_actum(n) for n in range(6)])
        compact = get(as_ardian, "application/json")
        # DRF's indent of decoded data: 10 x 8 x (1 + 2 + ... + 190) x 2 bytes an actum,
        # 2.9 MB; as sent now: its 3.8 kB of data and its indented fields.
        with override_settings(CHRONICA={"API_MAX_RESPONSE_BYTES": 9_000}):
            cut = get(as_ardian, INDENTED)
        assert len(cut.content) <= 9_000
        assert len(json.loads(cut.content)) == 2
        assert json.loads(cut.content) == json.loads(compact.content)[-2:]
        assert b'\n                "kind": "tool_response",\n' in cut.content
        assert 'rel="next"' in cut["Link"]

    def test_one_actum_indented_is_its_data_and_a_few_bytes_a_field(self, as_ardian, ardian):
        services.record_acta(str(ardian.pk), [deep_actum(0, copies=400)])
        compact = get(as_ardian, "application/json").content
        indented = get(as_ardian, INDENTED).content
        assert json.loads(indented) == json.loads(compact)
        assert len(compact) > 150_000
        assert len(indented) < len(compact) + 500

    @pytest.mark.parametrize("indent", range(9))
    def test_the_budget_holds_for_every_indent(self, as_ardian, ardian, indent):
        services.record_acta(str(ardian.pk), [deep_actum(n, depth=50) for n in range(8)])
        accept = f"application/json; indent={indent}"
        with override_settings(CHRONICA={"API_MAX_RESPONSE_BYTES": 3_000}):
            pages, url = [], acta_url()
            while url:
                response = as_ardian.get(url, HTTP_ACCEPT=accept)
                assert response.status_code == 200
                assert len(response.content) <= 3_000
                pages.append(json.loads(response.content))
                url = response.get("Link", "").partition("<")[2].partition(">")[0]
        assert sum(len(page) for page in pages) == 8


class IndentingRenderer(BaseRenderer):
    """A project's own JSON renderer, which indents by 2 and decodes ``data``."""

    media_type = "application/json"
    format = "json"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return json.dumps(data, indent=2).encode()


@pytest.mark.django_db
def test_a_projects_own_renderer_is_counted_as_it_writes(as_ardian, ardian, monkeypatch):
    from chronica.api.views import ChronicumViewSet

    services.record_acta(str(ardian.pk), [deep_actum(n, depth=30, copies=3) for n in range(6)])
    # What DEFAULT_RENDERER_CLASSES gives the viewset when the project's settings load.
    monkeypatch.setattr(ChronicumViewSet, "renderer_classes", [IndentingRenderer])
    with override_settings(CHRONICA={"API_MAX_RESPONSE_BYTES": 12_000}):
        response = as_ardian.get(acta_url())
    assert response.status_code == 200
    page = json.loads(response.content)
    assert len(response.content) <= 12_000
    # One more actum would not have fitted: the page is cut where the bytes end.
    one_more = json.dumps([page[0], *page], indent=2).encode()
    assert len(one_more) > 12_000
    assert response.content == json.dumps(page, indent=2).encode()


acta_like = st.lists(
    st.dictionaries(
        st.text(max_size=5),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=8),
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
            max_leaves=8,
        ),
        max_size=4,
    ),
    max_size=5,
)


@given(acta=acta_like, indent=st.sampled_from([None, 0, 1, 4, 8]), start=st.integers(0, 5))
def test_the_count_is_the_text(acta, indent, start):
    """What JSONArray counts is what it writes, and what DRF's JSONRenderer writes."""
    start = min(start, len(acta))
    array = JSONArray(acta, indent or None)
    text = array.text(start).text.encode()
    kept = array.sizes[start:]
    counted = array.brackets + sum(kept) + max(len(kept) - 1, 0) * array.separator
    assert len(text) == (counted if kept else 2)
    drf = JSONRenderer().render(acta[start:], renderer_context={"indent": indent or None})
    assert text == drf
