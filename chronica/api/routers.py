"""Routes that answer with and without their trailing slash, and routes under more names."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from django.urls import URLPattern, path, re_path
from django.urls.resolvers import RegexPattern, RoutePattern

__all__ = ["also_named", "optional_slash"]


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


def also_named(urlpatterns: Iterable[Any], names: Mapping[str, str]) -> list[URLPattern]:
    """For each route named in ``names``, the same route under the name it maps to.

    Put them after the routes themselves: a request resolves to the first match, so
    these only serve ``reverse()`` on the other names (those of an earlier
    release, say), and they are left out of the OpenAPI schema.
    """
    copies = []
    for pattern in urlpatterns:
        if not isinstance(pattern, URLPattern) or pattern.name is None or pattern.name not in names:
            continue
        name, view = names[pattern.name], _unlisted(pattern.callback)
        if isinstance(pattern.pattern, RegexPattern):
            copies.append(re_path(str(pattern.pattern.regex.pattern), view, name=name))
        else:
            copies.append(path(str(pattern.pattern), view, name=name))
    return copies


def _unlisted(view: Any) -> Any:
    # The same view, built again with no schema: the OpenAPI schema lists a route once.
    actions = getattr(view, "actions", None)
    initkwargs = {**getattr(view, "initkwargs", {}), "schema": None}
    args = (actions,) if actions is not None else ()
    return view.cls.as_view(*args, **initkwargs)


def _without_slash(pattern: Any) -> URLPattern | None:
    view = getattr(pattern, "callback", None)
    if not isinstance(pattern, URLPattern) or not hasattr(view, "cls"):
        return None
    alias = _unlisted(view)
    if isinstance(pattern.pattern, RegexPattern):
        regex = str(pattern.pattern.regex.pattern)
        if regex.endswith("/$") and regex != "^/$":
            return cast(URLPattern, re_path(regex[:-2] + "$", alias))
    elif isinstance(pattern.pattern, RoutePattern):
        route = str(pattern.pattern)
        if route.endswith("/"):
            return cast(URLPattern, path(route[:-1], alias))
    return None
