"""chronica's viewset on a project's own DRF router, next to the project's endpoints.

This module is the URLconf of its tests: a project that serves its restaurant
list and chronica under ``v1/`` with one ``DefaultRouter``.
"""

from __future__ import annotations

import pytest
from django.urls import include, path, reverse
from drf_spectacular.views import SpectacularAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import DefaultRouter
from rest_framework.test import APIClient
from rest_framework.viewsets import ViewSet

from chronica.api.routers import optional_slash
from chronica.api.views import ChronicumViewSet

from .. import scenario
from ..scenario import CHRONICUM
from .test_api import body

pytestmark = [pytest.mark.django_db, pytest.mark.urls(__name__)]


class RestaurantViewSet(ViewSet):
    """The project's own endpoint."""

    def list(self, request: Request) -> Response:
        return Response(["Rumah Teduh", "Kayu Manis"])


router = DefaultRouter()
router.register("restaurants", RestaurantViewSet, basename="restaurant")
router.register("chronica", ChronicumViewSet, basename="chronicum")

urlpatterns = [
    path("v1/", include(optional_slash(router.urls))),
    path("v1/schema/", SpectacularAPIView.as_view(), name="schema"),
]


@pytest.fixture
def as_ardian(ardian) -> APIClient:
    client = APIClient()
    client.force_login(ardian)
    return client


def test_dinner_friday_through_the_projects_router(as_ardian):
    acta_url = reverse("chronicum-acta", args=[CHRONICUM])
    assert acta_url == f"/v1/chronica/{CHRONICUM}/acta/"
    for actum in scenario.acta():
        assert as_ardian.post(acta_url, body(actum), format="json").status_code == 201
    last_three = as_ardian.get(acta_url, {"kind": "message", "last_n": "3"}).json()
    assert [a["actor"] for a in last_three] == ["search", "ardian", "concierge"]
    chronicum = as_ardian.get(reverse("chronicum-detail", args=[CHRONICUM]))
    assert chronicum.json()["id"] == CHRONICUM


def test_the_lifecycle_through_the_projects_router(as_ardian):
    list_url = reverse("chronicum-list")
    assert list_url == "/v1/chronica/"
    created = as_ardian.post(list_url, {"id": CHRONICUM}, format="json")
    assert created.status_code == 201
    assert created["Location"] == "http://testserver" + reverse(
        "chronicum-detail", args=[CHRONICUM]
    )
    assert [c["id"] for c in as_ardian.get(list_url).json()["results"]] == [CHRONICUM]
    assert as_ardian.delete(f"/v1/chronica/{CHRONICUM}").status_code == 204
    assert as_ardian.get("/v1/chronica").json() == {"results": [], "next": None}


def test_the_projects_endpoints_stay_as_they_were(as_ardian):
    assert as_ardian.get("/v1/restaurants/").json() == ["Rumah Teduh", "Kayu Manis"]
    assert as_ardian.get("/v1/restaurants").json() == ["Rumah Teduh", "Kayu Manis"]
    # DefaultRouter's root lists the list routes: the project's and chronica's.
    assert set(as_ardian.get("/v1/").json()) == {"restaurants", "chronica"}


def test_with_and_without_the_slash(as_ardian):
    reply = body(scenario.booking_reply())
    assert as_ardian.post(f"/v1/chronica/{CHRONICUM}/acta", reply, format="json").status_code == 201
    assert len(as_ardian.get(f"/v1/chronica/{CHRONICUM}/acta").json()) == 1
    assert as_ardian.get(f"/v1/chronica/{CHRONICUM}").json()["id"] == CHRONICUM


def test_the_projects_schema_describes_chronica_once(as_ardian):
    paths = as_ardian.get("/v1/schema/?format=json").json()["paths"]
    assert {p for p in paths if p.startswith("/v1/chronica/")} == {
        "/v1/chronica/",
        "/v1/chronica/{chronicum_id}/",
        "/v1/chronica/{chronicum_id}/acta/",
        "/v1/chronica/{chronicum_id}/acta/stream/",
        "/v1/chronica/{chronicum_id}/acta/pop/",
        "/v1/chronica/{chronicum_id}/state/",
        "/v1/chronica/{chronicum_id}/fork/",
        "/v1/chronica/{chronicum_id}/compactions/",
    }
    assert set(paths["/v1/chronica/{chronicum_id}/acta/"]) == {"get", "post"}
    assert set(paths["/v1/chronica/{chronicum_id}/acta/stream/"]) == {"get"}


def test_a_router_on_path_converters_gets_both_spellings_too():
    from rest_framework.routers import SimpleRouter

    converters = SimpleRouter(use_regex_path=False)
    converters.register("chronica", ChronicumViewSet, basename="chronicum")
    routes = [(str(p.pattern), p.name) for p in optional_slash(converters.urls)]
    assert routes == [
        ("chronica/", "chronicum-list"),
        ("chronica", None),
        ("chronica/<str:chronicum_id>/", "chronicum-detail"),
        ("chronica/<str:chronicum_id>", None),
        ("chronica/<str:chronicum_id>/acta/", "chronicum-acta"),
        ("chronica/<str:chronicum_id>/acta", None),
        ("chronica/<str:chronicum_id>/compactions/", "chronicum-compactions"),
        ("chronica/<str:chronicum_id>/compactions", None),
        ("chronica/<str:chronicum_id>/fork/", "chronicum-fork"),
        ("chronica/<str:chronicum_id>/fork", None),
        ("chronica/<str:chronicum_id>/acta/pop/", "chronicum-acta-pop"),
        ("chronica/<str:chronicum_id>/acta/pop", None),
        ("chronica/<str:chronicum_id>/state/", "chronicum-state"),
        ("chronica/<str:chronicum_id>/state", None),
        ("chronica/<str:chronicum_id>/acta/stream/", "chronicum-acta-stream"),
        ("chronica/<str:chronicum_id>/acta/stream", None),
    ]
