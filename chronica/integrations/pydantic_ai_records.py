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

__all__ = ["forget_deleted_conversation"]


def forget_deleted_conversation(
    sender: Any, *, owner_id: str, chronicum_id: str, **kwargs: Any
) -> None:
    """Drop the PydanticAI record (and entries) of a chronicum deleted through chronica.

    The signal comes after the commit: a conversation saved again under the same ID in
    between has a chronicum again, and keeps its new record.
    """
    try:
        services.get_chronicum(owner_id, chronicum_id)
        return
    except ChronicumNotFound:
        pass
    try:
        records = services.conversation_records()
    except ImproperlyConfigured:
        return  # no side tables in use
    records.forget(owner_id, chronicum_id)


chronicum_deleted.connect(
    forget_deleted_conversation, dispatch_uid="chronica.integrations.pydantic_ai_records"
)
