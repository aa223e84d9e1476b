from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ChronicaConfig(AppConfig):
    name = "chronica"
    # The admin's section and breadcrumb: "Agent sessions > Chronica", not "Chronica > Chronica".
    verbose_name = "Agent sessions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the system checks)
        from .integrations import pydantic_ai_records  # noqa: F401  (a record goes with its chronicum)

        post_migrate.connect(_forget_functions, dispatch_uid="chronica.forget_functions")
        _warm_schema_extensions()


def _warm_schema_extensions() -> None:
    """Resolve drf-spectacular's extension targets now, in one thread.

    drf-spectacular imports each extension's target class lazily, on the first schema
    generation, and that is not thread-safe: concurrent first requests for
    ``/api/schema/`` failed with 500 (a class's ``target_class`` set to ``None`` by one
    thread while another read it). Done once here, no request races on it.
    """
    from django.apps import apps

    if not apps.is_installed("drf_spectacular"):
        return
    import drf_spectacular.openapi  # noqa: F401  (imports and registers the contrib extensions)
    from drf_spectacular.plumbing import OpenApiGeneratorExtension

    for extension in _subclasses(OpenApiGeneratorExtension):
        registry = getattr(extension, "_registry", ())
        for registered in list(registry):
            if isinstance(registered.target_class, str):
                registered._load_class()


def _subclasses(cls: type) -> list[type]:
    found: list[type] = []
    sub: type
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_subclasses(sub))
    return found


def _forget_functions(**kwargs: Any) -> None:
    """A migration may have added or dropped the PostgreSQL functions."""
    from .stores.db import forget_functions

    forget_functions()
