"""The part of the PydanticAI integration that needs no PydanticAI.

A PydanticAI conversation keeps its messages as the acta of the chronicum named like
it, and its record and entries in two side tables (``chronica.models``). Deleting the
chronicum through ``chronica.services`` (the admin and the API do) must take the
record along, also in a process that never imports PydanticAI: ``ChronicaConfig.ready``
imports this module, which connects the receiver.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured

from .. import services
from ..errors import ChronicumNotFound
from ..signals import chronicum_deleted

__all__ = ["database", "forget_deleted_conversation"]


def database() -> str:
    """The database of the side tables: the one the configured chronica store writes to.

    The record and the acta of a conversation are written in one transaction, so they
    must live in the same database: only a store on a Django database can hold them.
    """
    store = services.get_chronicarius().store
    alias = getattr(store, "alias", None)  # DjangoStore's database
    if not isinstance(alias, str):
        raise ImproperlyConfigured(
            "chronica.integrations.pydantic_ai writes a conversation's record and its acta in"
            " one database transaction: CHRONICA['STORE'] must be a store on a Django database"
            f" (chronica.stores.db.DjangoStore), not {type(store).__name__}"
        )
    return alias


def forget_deleted_conversation(
    sender: Any, *, owner_id: str, chronicum_id: str, **kwargs: Any
) -> None:
    """Drop the PydanticAI record (and entries) of a chronicum deleted through chronica.

    The signal comes after the commit: a conversation saved again under the same ID in
    between has a chronicum again, and keeps its new record.
    """
    from ..models import PydanticAIConversation

    try:
        services.get_chronicum(owner_id, chronicum_id)
        return
    except ChronicumNotFound:
        pass
    try:
        alias = database()
    except ImproperlyConfigured:
        return  # no side tables in use
    PydanticAIConversation.objects.using(alias).filter(
        conversation_id=chronicum_id, owner_id=owner_id
    ).delete()


chronicum_deleted.connect(
    forget_deleted_conversation, dispatch_uid="chronica.integrations.pydantic_ai_records"
)
