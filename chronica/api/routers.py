"""Routes that answer with and without their trailing slash."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from django.urls import URLPattern, path, re_path
from django.urls.resolvers import RegexPattern, RoutePattern

__all__ = ["optional_slash"]


def optional_slash(urlpatterns: Iterable[Any]) -> list[Any]:
    """Each route of a DRF router, and the same route without its trailing slash.

    Without the second spelling, Django's ``APPEND_SLASH`` answers it with a 301,
    which clients follow as a GET: a POST would be lost. The slash spelling stays
    the one ``reverse()`` and the OpenAPI schema give; the other has no name and
    is left out of the schema. Anything but a DRF view is passed on as it is::

        urlpatterns = [path("api/", include(optional_slash(router.urls)))]
    """
    patterns = []
    for pattern in urlpatterns:
        patterns.append(pattern)
        alias = _without_slash(pattern)
        if alias is not None:
            patterns.append(alias)
    return patterns


def _without_slash(pattern: Any) -> URLPattern | None:
    view = getattr(pattern, "callback", None)
    if not isinstance(pattern, URLPattern) or not hasattr(view, "cls"):
        return None
    # The same view, built again with no schema: the OpenAPI schema lists a route once.
    actions = getattr(view, "actions", None)
    initkwargs = {**getattr(view, "initkwargs", {}), "schema": None}
    args = (actions,) if actions is not None else ()
    alias = view.cls.as_view(*args, **initkwargs)  # type: ignore[union-attr]
    if isinstance(pattern.pattern, RegexPattern):
        regex = str(pattern.pattern.regex.pattern)
        if regex.endswith("/$") and regex != "^/$":
            return cast(URLPattern, re_path(regex[:-2] + "$", alias))
    elif isinstance(pattern.pattern, RoutePattern):
        route = str(pattern.pattern)
        if route.endswith("/"):
            return cast(URLPattern, path(route[:-1], alias))
    return None
