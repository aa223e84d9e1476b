from django.apps import AppConfig


class PydanticAIConfig(AppConfig):
    """The tables of PydanticAI's conversations: a conversation's record (head,
    revision, branches, usage) and its entries (which actum holds each message)."""

    name = "chronica.integrations.pydantic_ai"
    label = "chronica_pydantic_ai"
    verbose_name = "PydanticAI conversations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from chronica.signals import chronicum_deleted, owner_erased

        from .records import erase_owner_rows, forget_deleted_conversation

        chronicum_deleted.connect(
            forget_deleted_conversation, dispatch_uid="chronica.integrations.pydantic_ai"
        )
        owner_erased.connect(erase_owner_rows, dispatch_uid="chronica.integrations.pydantic_ai")
