"""chronica's routes. Include them with ``path("api/", include("chronica.api.urls"))``.

Each route answers with and without its trailing slash. Their names, in the
``chronica`` namespace: ``chronicum-detail`` and ``chronicum-acta``, each with
the chronicum's ID as argument.
"""

from __future__ import annotations

from rest_framework.routers import SimpleRouter

from .routers import optional_slash
from .views import ChronicumViewSet

app_name = "chronica"

router = SimpleRouter()
router.register("chronica", ChronicumViewSet, basename="chronicum")

urlpatterns = optional_slash(router.urls)
