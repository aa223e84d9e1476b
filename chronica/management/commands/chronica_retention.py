"""``manage.py chronica_retention [--dry-run]``: apply ``CHRONICA["RETENTION"]``
(``chronica.services.apply_retention``); a cron line or a scheduled task runs it."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError, CommandParser

from chronica import services


class Command(BaseCommand):
    help = (
        "Apply the retention rules of CHRONICA['RETENTION']: redact old acta, delete"
        " inactive chronica, a batch at a time."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--dry-run", action="store_true", help="Count what each rule would change."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            done = services.apply_retention(dry_run=options["dry_run"])
        except (ValueError, ImproperlyConfigured) as exc:
            raise CommandError(str(exc)) from exc
        if not done:
            self.stdout.write("no retention rules (CHRONICA['RETENTION'] is empty)")
            return
        verb = "would change" if options["dry_run"] else "changed"
        for label, counts in done.items():
            rows = ", ".join(f"{table}: {n}" for table, n in sorted(counts.items()))
            self.stdout.write(f"{label}: {verb} {rows}")
