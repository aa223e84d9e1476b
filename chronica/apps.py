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


def _forget_functions(**kwargs: Any) -> None:
    """A migration may have added or dropped the PostgreSQL functions."""
    from .stores.db import forget_functions

    forget_functions()
