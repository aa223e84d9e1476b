"""chronica.api under ASGI: the same answers as under WSGI, through Django's AsyncClient."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.db import connections
from django.test import AsyncClient

from .. import scenario
from ..scenario import CHRONICUM
from .test_api import BOOKING_KEY, acta_url, body, chronicum_url

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
async def close_executor_connections():
    yield
    # The sync views ran on asgiref's executor thread: close its connection, or
    # the test database cannot be flushed and dropped.
    await sync_to_async(connections.close_all)()


async def signed_in(user) -> AsyncClient:
    client = AsyncClient()
    await client.aforce_login(user)
    return client


async def test_dinner_friday_over_asgi(ardian, rafa):
    as_ardian, as_rafa = await signed_in(ardian), await signed_in(rafa)
    for actum in scenario.acta():
        response = await as_ardian.post(acta_url(), body(actum), content_type="application/json")
        assert response.status_code == 201

    response = await as_ardian.get(acta_url(), {"kind": "message", "last_n": "3"})
    assert [a["actor"] for a in response.json()] == ["search", "ardian", "concierge"]

    theirs = await as_rafa.get(chronicum_url())
    missing = await as_rafa.get(chronicum_url("never-existed"))
    assert theirs.status_code == missing.status_code == 404
    assert theirs.content == missing.content


async def test_replay_over_asgi(ardian):
    client = await signed_in(ardian)
    headers = {"Idempotency-Key": BOOKING_KEY}
    first = await client.post(
        acta_url(), body(scenario.booking_reply()), content_type="application/json", headers=headers
    )
    reworded = body(scenario.booking_reply(scenario.BOOKING_REPLY_REWORDED))
    replay = await client.post(
        acta_url(), reworded, content_type="application/json", headers=headers
    )
    assert (first.status_code, replay.status_code) == (201, 200)
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json() == first.json()
    assert len((await client.get(acta_url())).json()) == 1
    assert (await client.get(chronicum_url())).json()["id"] == CHRONICUM


async def test_errors_over_asgi(ardian):
    client = await signed_in(ardian)
    assert (await AsyncClient().get(chronicum_url())).status_code in (401, 403)
    bad = await client.post(acta_url(), b'{"kind": ', content_type="application/json")
    assert bad.status_code == 400
    assert "JSON parse error" in bad.json()["detail"]
    assert (await client.get(acta_url(), {"last_n": "three"})).status_code == 400
    assert (await client.delete(acta_url())).status_code == 405


async def test_the_lifecycle_and_a_batch_over_asgi(ardian):
    client = await signed_in(ardian)
    created = await client.post("/api/chronica/", {}, content_type="application/json")
    assert created.status_code == 201
    chronicum_id = created.json()["id"]
    turn = [body(actum) for actum in scenario.acta(chronicum_id)]
    batch = await client.post(acta_url(chronicum_id), turn, content_type="application/json")
    assert batch.status_code == 201
    assert len(batch.json()) == 7
    page = await client.get(acta_url(chronicum_id), {"last_n": "3"})
    assert 'rel="next"' in page.headers["Link"]
    listed = (await client.get("/api/chronica/", {"limit": "1"})).json()
    assert [c["id"] for c in listed["results"]] == [chronicum_id]
    assert listed["next"] is None
    assert (await client.delete(chronicum_url(chronicum_id))).status_code == 204
    assert (await client.get(chronicum_url(chronicum_id))).status_code == 404
