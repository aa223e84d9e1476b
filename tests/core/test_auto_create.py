"""CHRONICA["AUTO_CREATE"] = False: only create_chronicum creates.

By default (the seed's rule 5) ardian's first write into dinner-friday creates it,
so a write tells whether an ID is free (201) or someone else's (404), and a named
ID can be taken by whoever writes it first. With AUTO_CREATE off, a write into a
missing chronicum is ChronicumNotFound exactly like a write into rafa's: nothing
is written and nothing created, on every write path; create_chronicum still
creates.
"""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.core.checks import run_checks
from django.core.exceptions import ImproperlyConfigured
from django.db import connections
from django.test import override_settings
from django.urls import reverse
from rest_framework.test import APIClient

from chronica import ChronicumNotFound, services
from chronica.conf import chronica_settings
from chronica.services import Chronicarius
from chronica.stores.memory import InMemoryStore
from chronica.values import StateChange

from .. import scenario
from ..scenario import CHRONICUM, OWNER
from ..teststores import PlainStore, StateDjangoStore

FRESH = "dinner-saturday"
OFF = {"AUTO_CREATE": False}


@pytest.fixture(autouse=True)
async def close_executor_connections():
    yield
    await sync_to_async(connections.close_all)()


class SeedStore(PlainStore):
    """An IdempotentStore with only the seed's methods: no batch, no owner-checked write."""

    def record_idempotent(self, actum, key):
        return self.inner.record_idempotent(actum, key)


@pytest.fixture(
    params=[
        "memory",
        "seed",
        pytest.param("django", marks=pytest.mark.django_db(transaction=True)),
    ]
)
def store(request):
    """InMemoryStore, a store with only the seed's methods, and DjangoStore (with state)."""
    stores = {"memory": InMemoryStore, "seed": SeedStore, "django": StateDjangoStore}
    return stores[request.param]()


@pytest.fixture
def chronicarius(store):
    chronicarius = Chronicarius(store, auto_create=False)
    chronicarius.create_chronicum(OWNER, CHRONICUM)
    chronicarius.create_chronicum("rafa", "lunch-saturday")
    return chronicarius


def writes(chronicarius, chronicum_id):
    """Every way of writing into ``chronicum_id`` that the store can take."""
    reply = scenario.booking_reply(chronicum_id=chronicum_id)
    yield lambda: chronicarius.record_actum(OWNER, reply)
    yield lambda: chronicarius.record_actum(OWNER, reply, idempotency_key="booking-1")
    if getattr(chronicarius.store, "supports_append", False):
        dinner = scenario.acta(chronicum_id)
        yield lambda: chronicarius.record_acta(OWNER, dinner)
        yield lambda: chronicarius.record_acta(OWNER, dinner, idempotency_key="dinner")
    if getattr(chronicarius.store, "supports_state", False):
        yield lambda: chronicarius.record_acta(
            OWNER,
            [scenario.booking_reply(chronicum_id=chronicum_id)],
            state=[StateChange(namespace="dinner", set={"booked": True})],
        )


def test_a_write_into_a_missing_chronicum_is_not_found_and_creates_nothing(chronicarius):
    for write in writes(chronicarius, FRESH):
        with pytest.raises(ChronicumNotFound):
            write()
        with pytest.raises(ChronicumNotFound):
            chronicarius.store.get(FRESH)
    assert chronicarius.get_acta(OWNER, CHRONICUM) == []


def test_it_is_the_same_answer_as_a_write_into_another_owners(chronicarius):
    for missing, theirs in zip(
        writes(chronicarius, FRESH), writes(chronicarius, "lunch-saturday"), strict=True
    ):
        with pytest.raises(ChronicumNotFound) as into_missing:
            missing()
        with pytest.raises(ChronicumNotFound) as into_theirs:
            theirs()
        assert type(into_missing.value) is type(into_theirs.value)
        assert into_missing.value.args == (FRESH,)
        assert into_theirs.value.args == ("lunch-saturday",)
    assert chronicarius.get_acta("rafa", "lunch-saturday") == []


def test_create_chronicum_creates_and_then_every_write_lands(chronicarius):
    chronicarius.create_chronicum(OWNER, FRESH)
    for write in writes(chronicarius, FRESH):
        write()
    assert chronicarius.get_acta(OWNER, FRESH)


async def test_the_async_writes_too(chronicarius):
    with pytest.raises(ChronicumNotFound):
        await chronicarius.arecord_actum(OWNER, scenario.booking_reply(chronicum_id=FRESH))
    with pytest.raises(ChronicumNotFound):
        await chronicarius.arecord_actum(
            OWNER, scenario.booking_reply(chronicum_id=FRESH), idempotency_key="booking-1"
        )
    with pytest.raises(ChronicumNotFound):
        await sync_to_async(chronicarius.store.get)(FRESH)


def test_update_state_with_create_is_a_create(store):
    """``update_state(create=True)`` is create_chronicum with the first state (ADK's
    create_session): it creates, as create_chronicum does."""
    if not getattr(store, "supports_state", False):
        pytest.skip(f"{type(store).__name__} keeps no state")
    chronicarius = Chronicarius(store, auto_create=False)
    change = StateChange(namespace="dinner", set={"party": 4})
    chronicarius.update_state(OWNER, FRESH, [change], create=True)
    assert chronicarius.get_chronicum(OWNER, FRESH).owner_id == OWNER


def test_the_default_is_the_seeds_rule(store):
    chronicarius = Chronicarius(store)
    stored = chronicarius.record_actum(OWNER, scenario.booking_reply(chronicum_id=FRESH))
    assert chronicarius.get_acta(OWNER, FRESH) == [stored]


@pytest.mark.parametrize("value", ["false", 0, None, 1])
def test_anything_but_a_bool_is_refused(value):
    with pytest.raises(TypeError, match="auto_create"):
        Chronicarius(InMemoryStore(), auto_create=value)


# -- the setting ----------------------------------------------------------------------


@pytest.mark.parametrize("value", ["false", 0, None, "True"])
def test_a_setting_that_is_not_a_bool_is_improperly_configured_and_chronica_E015(value):
    with override_settings(CHRONICA={"AUTO_CREATE": value}):
        with pytest.raises(ImproperlyConfigured, match=r"CHRONICA\['AUTO_CREATE'\]"):
            bool(chronica_settings.AUTO_CREATE)
        ids = [m.id for m in run_checks() if m.id and m.id.startswith("chronica.")]
        assert ids == ["chronica.E015"]


@pytest.mark.django_db(transaction=True)
def test_the_module_functions_follow_the_setting():
    with override_settings(CHRONICA=OFF):
        with pytest.raises(ChronicumNotFound):
            services.record_actum(OWNER, scenario.booking_reply())
        services.create_chronicum(OWNER, CHRONICUM)
        services.record_actum(OWNER, scenario.booking_reply())
    services.record_actum(OWNER, scenario.booking_reply(chronicum_id=FRESH))
    assert [c.id for c in services.list_chronica(OWNER)] == [FRESH, CHRONICUM]


@pytest.mark.django_db(transaction=True)
async def test_the_asyncio_path_follows_the_setting():
    """On PostgreSQL the a* writes run on psycopg's async connections (pg_async)."""
    with override_settings(CHRONICA=OFF):
        with pytest.raises(ChronicumNotFound):
            await services.arecord_actum(OWNER, scenario.booking_reply())
        with pytest.raises(ChronicumNotFound):
            await services.arecord_acta(OWNER, scenario.acta(), idempotency_key="k")
        with pytest.raises(ChronicumNotFound):
            await services.aget_chronicum(OWNER, CHRONICUM)
        await services.acreate_chronicum(OWNER, CHRONICUM)
        await services.arecord_acta(OWNER, scenario.acta())
        assert len(await services.aget_acta(OWNER, CHRONICUM)) == 7


# -- over HTTP ------------------------------------------------------------------------


def client_for(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


BODY = {"kind": "message", "actor_kind": "agent", "actor": "booking", "content": "Held."}


@pytest.mark.django_db(transaction=True)
@override_settings(CHRONICA=OFF)
def test_the_api_answers_404_with_the_body_of_another_owners(ardian, rafa):
    ardian_client, rafa_client = client_for(ardian), client_for(rafa)
    list_url = reverse("chronica:chronicum-list")
    assert ardian_client.post(list_url, {"id": CHRONICUM}, format="json").status_code == 201
    for payload in (BODY, [BODY, BODY]):
        for headers in ({}, {"Idempotency-Key": "booking-reply-1"}):
            theirs = rafa_client.post(
                reverse("chronica:chronicum-acta", args=[CHRONICUM]),
                payload,
                format="json",
                headers=headers,
            )
            missing = rafa_client.post(
                reverse("chronica:chronicum-acta", args=[FRESH]),
                payload,
                format="json",
                headers=headers,
            )
            assert (missing.status_code, missing.json()) == (404, theirs.json())
            assert theirs.status_code == 404
            assert missing.headers.get("Content-Type") == theirs.headers.get("Content-Type")
    assert rafa_client.get(list_url).json()["results"] == []
    assert rafa_client.get(reverse("chronica:chronicum-detail", args=[FRESH])).status_code == 404
    assert rafa_client.post(list_url, {"id": FRESH}, format="json").status_code == 201
    answer = rafa_client.post(reverse("chronica:chronicum-acta", args=[FRESH]), BODY, format="json")
    assert answer.status_code == 201
