"""The test project's URLs with the stream route, as chronica.api.urls registers it, and
the example page that follows a chronicum live (example_project/dinner/templates)."""

from django.contrib import admin
from django.urls import include, path
from django.views.generic import TemplateView
from rest_framework.routers import SimpleRouter

from chronica.api.routers import optional_slash
from chronica.api.stream import ActaStreamMixin
from chronica.api.views import ChronicumViewSet

if issubclass(ChronicumViewSet, ActaStreamMixin):
    StreamingChronicumViewSet = ChronicumViewSet
else:  # until chronica.api.views registers the stream

    class StreamingChronicumViewSet(ActaStreamMixin, ChronicumViewSet):  # type: ignore[no-redef]
        """ChronicumViewSet with the stream action."""


router = SimpleRouter()
router.register("chronica", StreamingChronicumViewSet, basename="chronicum")

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include((optional_slash(router.urls), "chronica"))),
    path(
        "dinner/<str:chronicum_id>/follow/",
        TemplateView.as_view(template_name="dinner/follow.html"),
        name="dinner-follow",
    ),
]
