from django.apps import AppConfig


class ChronicaConfig(AppConfig):
    name = "chronica"
    # The admin's section and breadcrumb: "Agent sessions > Chronica", not "Chronica > Chronica".
    verbose_name = "Agent sessions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the system checks)
