"""``manage.py chronica_purge --inactive-for DAYS``: delete the chronica nobody wrote into
for DAYS days, with their acta.

Safe to run while agents write, in bounded transactions: a chronicum with more acta
than ``--batch-size`` loses its oldest acta a batch at a time, each batch in a
transaction of its own that first takes the chronicum's lock and checks that it is
still inactive; the last batch goes with the chronicum itself, through
``chronica.services.delete_chronicum``, under the same lock and check. A chronicum
written into while it is being purged is kept, but the acta older than the cutoff
that were already deleted stay deleted.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from argparse import ArgumentParser, ArgumentTypeError
from collections.abc import Iterator
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import connections, transaction
from django.db.models import F, Q

from chronica import models, services
from chronica.errors import ChronicumNotFound

# A whole batch is a transaction of ours: on SQLite it can be tried again when the
# database stayed locked past the busy timeout, as the store's own writes are.
from chronica.stores.db import DjangoStore, retry_when_locked
from chronica.stores.db.base import BaseDialect
from chronica.stores.db.dialects import dialect_of

DEFAULT_BATCH_SIZE = 1000
MAX_BATCH_SIZE = 5000
PAGE = 500
"""Chronica are listed this many at a time."""


ACTA = models.Actum._meta.db_table


def _bounded(low: int, high: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise ArgumentTypeError(f"{value} is not from {low:,} to {high:,}")
        return value

    return parse


@dataclasses.dataclass(frozen=True)
class Candidate:
    id: str
    owner_id: str
    last_activity_at: dt.datetime


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What became of one chronicum: ``deleted``, ``kept`` (written into meanwhile) or
    ``gone`` (deleted by someone else meanwhile), and how many of its acta were deleted."""

    state: str
    acta: int


class Purge:
    """Deletes inactive chronica on the database of a ``DjangoStore``."""

    def __init__(self, store: DjangoStore, cutoff: dt.datetime, batch_size: int) -> None:
        self.alias = store.alias
        self.cutoff = cutoff
        self.batch_size = batch_size

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

    def _dialect(self) -> BaseDialect:
        return dialect_of(connections[self.alias])

    def count_acta(self, chronicum_id: str) -> int:
        with connections[self.alias].cursor() as cursor:
            cursor.execute(self._dialect().count_acta, [chronicum_id])
            return int(cursor.fetchone()[0])

    def purge(self, candidate: Candidate) -> Outcome:
        """Delete one chronicum a batch of acta at a time, unless it is written into."""
        deleted = 0
        while True:
            state, count = retry_when_locked(
                connections[self.alias], lambda: self._next_batch(candidate)
            )
            deleted += count
            if state is not None:
                return Outcome(state, deleted)

    def _next_batch(self, candidate: Candidate) -> tuple[str | None, int]:
        """One transaction: the oldest batch of acta, or the chronicum with the rest.
        Returns what became of the chronicum (``None``: more to delete) and how many
        acta went."""
        with transaction.atomic(using=self.alias):
            state = self._lock_if_inactive(candidate)
            if state is not None:
                return state, 0
            with connections[self.alias].cursor() as cursor:
                cursor.execute(
                    self._dialect().count_acta_up_to, [candidate.id, self.batch_size + 1]
                )
                left = int(cursor.fetchone()[0])
                if left > self.batch_size:
                    return None, self.delete_oldest(cursor, candidate.id)
            try:
                services.delete_chronicum(candidate.owner_id, candidate.id)
            except ChronicumNotFound:
                return "gone", 0
            return "deleted", left

    def delete_oldest(self, cursor: Any, chronicum_id: str) -> int:
        """Delete the oldest ``batch_size`` acta of the chronicum (its lock is held)."""
        cursor.execute(self._dialect().delete_oldest, [chronicum_id, chronicum_id, self.batch_size])
        return int(cursor.rowcount)

    def _lock_if_inactive(self, candidate: Candidate) -> str | None:
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


class Command(BaseCommand):
    help = (
        "Delete the chronica (with their acta) that nobody wrote into for DAYS days, in"
        " bounded batches; safe while agents write. A chronicum written into meanwhile is"
        " kept, though its acta older than the cutoff that were already deleted stay deleted."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--inactive-for",
            type=_bounded(1, 1_000_000),
            required=True,
            metavar="DAYS",
            help="delete chronica whose last actum is older than this many days",
        )
        parser.add_argument("--owner", metavar="ID", help="only this owner's chronica")
        parser.add_argument(
            "--dry-run", action="store_true", help="print what would be deleted, delete nothing"
        )
        parser.add_argument(
            "--batch-size",
            type=_bounded(1, MAX_BATCH_SIZE),
            default=DEFAULT_BATCH_SIZE,
            metavar="N",
            help=f"acta deleted per transaction (default {DEFAULT_BATCH_SIZE:,})",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        store = services.get_chronicarius().store
        if not isinstance(store, DjangoStore):
            raise CommandError(
                f"chronica_purge deletes from a DjangoStore; CHRONICA['STORE'] is a"
                f" {type(store).__name__}"
            )
        cutoff = dt.datetime.now(dt.UTC) - dt.timedelta(days=options["inactive_for"])
        purge = Purge(store, cutoff, options["batch_size"])
        dry_run: bool = options["dry_run"]
        total, candidates = purge.candidates(options["owner"])
        since = f"inactive since {cutoff.isoformat(timespec='seconds')}"
        counts = {"deleted": 0, "kept": 0, "gone": 0}
        acta = 0
        for done, candidate in enumerate(candidates, start=1):
            self.progress(f"{done}/{total} {candidate.id}")
            described = (
                f"{candidate.id} (owner {candidate.owner_id}, last activity"
                f" {candidate.last_activity_at.isoformat(timespec='seconds')}"
            )
            if dry_run:
                n = purge.count_acta(candidate.id)
                self.line(f"would delete {described}, {n:,} acta)")
                counts["deleted"] += 1
                acta += n
                continue
            outcome = purge.purge(candidate)
            counts[outcome.state] += 1
            acta += outcome.acta
            if outcome.state == "deleted":
                self.line(f"deleted {described}, {outcome.acta:,} acta)")
            elif outcome.state == "kept":
                self.line(
                    f"kept {described}): written into during the purge;"
                    f" {outcome.acta:,} of its oldest acta were deleted"
                )
            else:
                self.line(f"gone {described}): deleted by someone else meanwhile")
        verb = "Would delete" if dry_run else "Deleted"
        if not any(counts.values()):
            self.line(f"No chronica {since}.")
            return
        summary = f"{verb} {counts['deleted']:,} chronica ({acta:,} acta) {since}."
        if counts["kept"]:
            summary += f" Kept {counts['kept']:,} written into meanwhile."
        self.line(summary)

    def progress(self, text: str) -> None:
        """A line that the next one overwrites, only on a terminal."""
        if self.stdout.isatty():
            self.stdout.write(f"\r\x1b[K{text}", ending="")
            self.stdout.flush()

    def line(self, text: str) -> None:
        self.progress("")
        self.stdout.write(text)
