"""What ``manage.py chronica_purge`` asks of the database of a ``DjangoStore``: the
inactive chronica, their acta counted and deleted a batch at a time, and a
chronicum's lock. The command keeps the order of the steps and deletes each chronicum
itself through ``chronica.services``; the SQL is here, with the rest of chronica's.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from django.db import connections, transaction
from django.db.models import F, Q

from ... import models
from .dialects import dialect_of, retry_when_locked

__all__ = ["ACTA", "PAGE", "Candidate", "PurgeQueries"]

_T = TypeVar("_T")

PAGE = 500
"""Chronica are listed this many at a time."""

ACTA = models.Actum._meta.db_table


@dataclasses.dataclass(frozen=True)
class Candidate:
    id: str
    owner_id: str
    last_activity_at: dt.datetime


class PurgeQueries:
    """The statements of a purge on the database ``alias``, for chronica inactive since
    ``cutoff``."""

    def __init__(self, alias: str, cutoff: dt.datetime) -> None:
        self.alias = alias
        self.cutoff = cutoff

    def candidates(self, owner_id: str | None) -> tuple[int, Iterator[Candidate]]:
        """How many chronica were inactive when asked, and each of them, least recently
        active first (read a page at a time)."""
        inactive = models.Chronicum.objects.using(self.alias).filter(
            last_activity_at__lt=self.cutoff
        )
        if owner_id is not None:
            inactive = inactive.filter(owner_id=owner_id)
        ordered = inactive.order_by("last_activity_at", "id")

        def pages() -> Iterator[Candidate]:
            page = ordered
            while True:
                rows = list(page.values_list("id", "owner_id", "last_activity_at")[:PAGE])
                yield from (Candidate(*row) for row in rows)
                if len(rows) < PAGE:
                    return
                at, last = rows[-1][2], rows[-1][0]
                page = ordered.filter(
                    Q(last_activity_at__gt=at) | Q(last_activity_at=at, id__gt=last)
                )

        return inactive.count(), pages()

    def count_acta(self, chronicum_id: str) -> int:
        with connections[self.alias].cursor() as cursor:
            cursor.execute(
                dialect_of(connections[self.alias]).statement("COUNT_ACTA"),
                {"chronicum_id": chronicum_id},
            )
            return int(cursor.fetchone()[0])

    def in_transaction(self, write: Callable[[], _T]) -> _T:
        """``write`` in a transaction of its own; on SQLite tried again when the database
        stayed locked past the busy timeout, as the store's own writes are."""

        def atomic() -> _T:
            with transaction.atomic(using=self.alias):
                return write()

        return retry_when_locked(connections[self.alias], atomic)

    def cursor(self) -> Any:
        return connections[self.alias].cursor()

    def count_up_to(self, cursor: Any, chronicum_id: str, most: int) -> int:
        """How many acta the chronicum has, counted up to ``most``."""
        cursor.execute(
            dialect_of(connections[self.alias]).statement("COUNT_ACTA_UP_TO"),
            {"chronicum_id": chronicum_id, "most": most},
        )
        return int(cursor.fetchone()[0])

    def delete_oldest(self, cursor: Any, chronicum_id: str, count: int) -> int:
        """Delete the oldest ``count`` acta of the chronicum (its lock is held)."""
        cursor.execute(
            dialect_of(connections[self.alias]).statement("DELETE_OLDEST"),
            {"chronicum_id": chronicum_id, "count": count},
        )
        return int(cursor.rowcount)

    def lock_if_inactive(self, candidate: Candidate) -> str | None:
        """Take the chronicum's lock; ``None`` if it is still there and inactive, else
        ``"gone"`` or ``"kept"``."""
        mine = models.Chronicum.objects.using(self.alias).filter(
            pk=candidate.id, owner_id=candidate.owner_id
        )
        # A write first: on SQLite it takes the database's write lock before any read
        # (a transaction that reads first cannot take it later while a writer waits).
        if not mine.update(last_activity_at=F("last_activity_at")):
            return "gone"
        last = mine.select_for_update().values_list("last_activity_at", flat=True).first()
        if last is None:
            return "gone"
        return "kept" if last >= self.cutoff else None
