from django.apps import AppConfig


class ChronicaConfig(AppConfig):
    name = "chronica"
    verbose_name = "Chronica"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the system checks)
        from .integrations import pydantic_ai_records  # noqa: F401  (a record goes with its chronicum)
