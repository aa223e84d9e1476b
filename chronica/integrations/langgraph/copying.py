"""``copy_thread``: a thread's checkpoints, channel values, pending writes and message
rows copied to a new thread, whose chronicum is a fork of the source's
(``services.fork_chronicum``: copies of every actum, in order, with new IDs), so that
the copied message rows name the copied acta."""

from __future__ import annotations

from typing import Any

from chronica import services

from .models import LangGraphBlob, LangGraphCheckpoint, LangGraphMessage, LangGraphWrite
from .rows import Rows

__all__ = ["copy_thread_rows"]

_BATCH = 1000


def _copy(rows: Rows, model: Any, owner_id: str, source: str, target: str, **more: Any) -> None:
    fields = [
        f.attname
        for f in model._meta.concrete_fields
        if not f.primary_key and f.attname not in ("thread_id", "owner_id")
    ]
    found = rows.objects(model).filter(owner_id=owner_id, thread_id=source).order_by("pk")
    batch = []
    for values in found.values(*fields).iterator(chunk_size=_BATCH):
        values = {**values, **{k: f(values) for k, f in more.items()}}
        batch.append(model(owner_id=owner_id, thread_id=target, **values))
        if len(batch) >= _BATCH:
            rows.objects(model).bulk_create(batch)
            batch = []
    if batch:
        rows.objects(model).bulk_create(batch)


def copy_thread_rows(rows: Rows, owner_id: str, source: str, target: str) -> None:
    """Fork the source's chronicum as ``target`` and copy the source's rows to it, in
    the caller's transaction. A source without a chronicum (or another owner's) is
    ``ChronicumNotFound``; a taken ``target``, ``ChronicumExists``."""
    before = [a.id for a in services.get_acta(owner_id, source)]
    services.fork_chronicum(owner_id, source, new_id=target)
    after = [a.id for a in services.get_acta(owner_id, target)]
    copies = dict(zip(before, after, strict=True))
    for model in (LangGraphCheckpoint, LangGraphBlob, LangGraphWrite):
        _copy(rows, model, owner_id, source, target)
    _copy(
        rows,
        LangGraphMessage,
        owner_id,
        source,
        target,
        actum_ids=lambda values: [copies.get(i, i) for i in values["actum_ids"]],
    )
