"""``manage.py chronica_erase --owner OWNER [--reason TEXT] [--dry-run]``: remove
everything chronica keeps of one owner (``chronica.services.erase_owner``)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from chronica import services


class Command(BaseCommand):
    help = (
        "Erase an owner: every chronicum with its acta and state, the owner's state, the"
        " credentials the owner issued and every integration's rows. A record (the owner"
        " ID's SHA-256, when, the reason, the rows removed) stays in chronica_erasures."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--owner", required=True, help="The owner ID to erase.")
        parser.add_argument("--reason", default="", help="Why (kept in the record).")
        parser.add_argument(
            "--dry-run", action="store_true", help="Count what would go; remove nothing."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            erasure = services.erase_owner(
                options["owner"], reason=options["reason"], dry_run=options["dry_run"]
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        verb = "would remove" if options["dry_run"] else "removed"
        self.stdout.write(f"owner {erasure.owner_hash} (SHA-256): {verb}")
        for table, rows in sorted(erasure.counts.items()):
            self.stdout.write(f"  {table}: {rows}")
