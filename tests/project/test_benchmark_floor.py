"""The HTTP benchmark's DRF floor (benchmarks/http.py) answers what chronica's API answers:
the same acta in the same order, with the same fields. A field added to the wire and not
to the floor made ``make bench`` stop at its check; here it fails in ``make test``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient, APIRequestFactory, force_authenticate

from chronica import services
from tests import scenario

pytestmark = pytest.mark.django_db


def test_the_floors_window_is_the_apis(ardian: Any) -> None:
    from benchmarks.http import FloorActa

    owner = services.owner_id_for(ardian)
    recorded = [services.record_actum(owner, actum) for actum in scenario.acta()]
    services.redact_actum(owner, scenario.CHRONICUM, recorded[1].id, reason="asked")
    path = f"/api/chronica/{scenario.CHRONICUM}/acta/?last_n=20"

    api = APIClient()
    api.force_authenticate(ardian)
    ours = api.get(path).json()
    request = APIRequestFactory().get(path)
    force_authenticate(request, ardian)
    response = FloorActa.as_view()(request, chronicum_id=scenario.CHRONICUM)
    response.render()
    theirs = json.loads(response.content)

    assert [a["id"] for a in theirs] == [a["id"] for a in ours] == [a.id for a in recorded]
    assert [set(a) for a in theirs] == [set(a) for a in ours]
    assert [a["redacted"] is None for a in theirs] == [a["redacted"] is None for a in ours]
    assert theirs[1]["redacted"]["reason"] == ours[1]["redacted"]["reason"] == "asked"


def test_the_floors_write_does_the_apis_work(ardian: Any) -> None:
    """The floor's write bumps the chronicum as chronica's does (so it takes the row's
    lock before the actum's seq) and answers the stored actum with the API's fields."""
    from benchmarks.http import FloorActa

    owner = services.owner_id_for(ardian)
    services.create_chronicum(owner, "floor-write")
    services.create_chronicum(owner, "api-write")
    body = {"kind": "message", "actor_kind": "human", "actor": "ardian", "content": "eight?"}

    api = APIClient()
    api.force_authenticate(ardian)
    ours = api.post("/api/chronica/api-write/acta/", body, format="json")
    before = services.get_chronicum(owner, "floor-write").last_activity_at
    request = APIRequestFactory().post("/floor/floor-write/acta/", body, format="json")
    force_authenticate(request, ardian)
    response = FloorActa.as_view()(request, chronicum_id="floor-write")
    response.render()
    theirs = json.loads(response.content)

    assert ours.status_code == response.status_code == 201
    assert set(theirs) == set(ours.json())
    stored = services.get_acta(owner, "floor-write")
    assert [a.id for a in stored] == [theirs["id"]]
    assert stored[0].content == theirs["content"] == "eight?"
    assert services.get_chronicum(owner, "floor-write").last_activity_at > before

    # Someone else's chronicum: nothing written, 404.
    services.create_chronicum("rafa", "rafas")
    request = APIRequestFactory().post("/floor/rafas/acta/", body, format="json")
    force_authenticate(request, ardian)
    assert FloorActa.as_view()(request, chronicum_id="rafas").status_code == 404
    assert services.get_acta("rafa", "rafas") == []
