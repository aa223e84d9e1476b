from django.apps import AppConfig


class LangGraphConfig(AppConfig):
    """The tables of LangGraph's checkpoints (``ChronicaSaver``) and long-term memory
    (``ChronicaStore``): checkpoints, channel values, pending writes, which acta hold a
    thread's messages, and the store's items."""

    name = "chronica.integrations.langgraph"
    label = "chronica_langgraph"
    verbose_name = "LangGraph checkpoints"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from chronica.signals import actum_redacted, chronicum_deleted, owner_erased

        from .redaction import forget_redacted
        from .rows import erase_owner, forget_deleted_thread

        chronicum_deleted.connect(
            forget_deleted_thread, dispatch_uid="chronica.integrations.langgraph"
        )
        owner_erased.connect(erase_owner, dispatch_uid="chronica.integrations.langgraph")
        actum_redacted.connect(forget_redacted, dispatch_uid="chronica.integrations.langgraph")
