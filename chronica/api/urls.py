"""chronica's routes. Include them with ``path("api/", include("chronica.api.urls"))``."""

from __future__ import annotations

from django.urls import path

from .views import ActaView, ChronicumView

app_name = "chronica"

urlpatterns = [
    path("chronica/<str:chronicum_id>/", ChronicumView.as_view(), name="chronicum"),
    path("chronica/<str:chronicum_id>/acta/", ActaView.as_view(), name="acta"),
]
