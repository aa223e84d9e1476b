"""The benchmarks' URLs: chronica's API as a project mounts it (``tests/urls.py``), and
the DRF floor views of case 18 (``benchmarks/http.py``)."""

from django.urls import include, path

from .http import FloorActa

urlpatterns = [
    path("api/", include("chronica.api.urls")),
    path("floor/<str:chronicum_id>/acta/", FloorActa.as_view(), name="floor-acta"),
]
