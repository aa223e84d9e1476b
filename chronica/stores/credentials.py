"""The agent credentials' table (``chronica.models.AgentCredential``): the only code
that reads or writes it. The rules (issuing, hashing, checking) are in
``chronica.services.credentials``."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any, TypeVar

from django.db import connections, router

from ..models import AgentCredential
from .db.dialects import dialect_of

_T = TypeVar("_T")

__all__ = ["add", "find", "mark_used", "of_owner", "revoke"]


def _rows() -> Any:
    return AgentCredential.objects.using(router.db_for_write(AgentCredential))


def _write(write: Callable[[], _T]) -> _T:
    """A write of ours, tried again where SQLite gave up waiting for its write lock
    (agents writing hard while the credential is revoked), as the store's writes are."""
    connection = connections[router.db_for_write(AgentCredential)]
    return dialect_of(connection).retry_when_locked(connection, write)


def add(**fields: Any) -> AgentCredential:
    return _write(lambda: _rows().create(**fields))  # type: ignore[no-any-return]


def find(key_id: str) -> AgentCredential | None:
    return _rows().filter(key_id=key_id).first()  # type: ignore[no-any-return]


def mark_used(key_id: str, now: dt.datetime, *, every: dt.timedelta) -> None:
    """Set ``last_used_at``, at most once every ``every`` (a write per request would
    serialise an agent's requests on the row)."""
    from django.db.models import Q

    rows = _rows().filter(
        Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - every), key_id=key_id
    )
    _write(lambda: rows.update(last_used_at=now))


def revoke(key_id: str, now: dt.datetime, owner_id: str | None) -> bool:
    rows = _rows().filter(key_id=key_id, revoked_at__isnull=True)
    if owner_id is not None:
        rows = rows.filter(owner_id=owner_id)
    return bool(_write(lambda: rows.update(revoked_at=now)))


def of_owner(owner_id: str | None) -> list[AgentCredential]:
    rows = _rows()
    if owner_id is not None:
        rows = rows.filter(owner_id=owner_id)
    return list(rows.order_by("-created_at", "key_id"))
