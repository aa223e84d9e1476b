"""chronica's routes. Include them with ``path("api/", include("chronica.api.urls"))``.

Each route answers with and without its trailing slash. Their names, in the
``chronica`` namespace: ``chronicum-list`` (no argument), ``chronicum-detail``
and ``chronicum-acta`` (the chronicum's ID as argument). The names of the
previous release, ``chronicum`` and ``acta``, still reverse to the same routes.
Any other path under ``chronica/`` is a JSON 404.
"""

from __future__ import annotations

from django.urls import re_path
from rest_framework.routers import SimpleRouter

from .errors import not_found
from .redact import redact_patterns
from .routers import also_named, optional_slash
from .search import SearchViewSet
from .views import ChronicumViewSet

app_name = "chronica"

router = SimpleRouter()
router.register("chronica", ChronicumViewSet, basename="chronicum")
router.register("search", SearchViewSet, basename="search")

urlpatterns = [
    *optional_slash(router.urls),
    *also_named(router.urls, {"chronicum-detail": "chronicum", "chronicum-acta": "acta"}),
    *redact_patterns,
    # Last: an ID holding a "/" (sent as %2F) or a path no route names.
    re_path(r"^chronica(/|$)", not_found),
]
