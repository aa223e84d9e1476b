"""``manage.py chronica_search --owner OWNER QUERY``: an owner's acta that match a query,
best first, across all their chronica (``chronica.services.search_acta``).

An operator tool: it searches any owner's acta, as that owner. ``--json`` prints one
hit a line (the API's fields); ``--build-index`` (re)builds PostgreSQL's index for
``CHRONICA["SEARCH_CONFIG"]`` without locking writers out (``CREATE INDEX
CONCURRENTLY``), after that setting changed or where a migration could not build it.
"""

from __future__ import annotations

import json
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import DEFAULT_DB_ALIAS, connections

from chronica.errors import ChronicaError
from chronica.management.commands.chronica_show import as_json, split_values
from chronica.management.pipes import quiet_when_the_reader_leaves
from chronica.services import get_chronicarius
from chronica.values import FILTERS


class Command(BaseCommand):
    help = (
        "Search an owner's acta across all their chronica: words (all must match),"
        ' "quoted phrases", or, -word. Best first.'
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("query", nargs="?", help="what to find")
        parser.add_argument("--owner", help="whose acta (required to search)")
        parser.add_argument(
            "--chronicum", action="append", metavar="ID", help="only in this chronicum (repeatable)"
        )
        for declared in FILTERS:
            parser.add_argument(
                "--" + declared.name.replace("_", "-"),
                action="append",
                dest=declared.name,
                metavar="K" if declared.choices else "ID",
                help=f"{declared.help} (repeatable)",
            )
        parser.add_argument("--limit", type=int, default=20, help="at most N hits (default 20)")
        parser.add_argument("--json", action="store_true", help="one JSON object a hit")
        parser.add_argument(
            "--build-index",
            action="store_true",
            help="(re)build PostgreSQL's search index for CHRONICA['SEARCH_CONFIG'], concurrently",
        )
        parser.add_argument("--database", default=DEFAULT_DB_ALIAS, help="for --build-index")

    def handle(self, *args: Any, **options: Any) -> None:
        with quiet_when_the_reader_leaves():
            self.search(options)

    def search(self, options: dict[str, Any]) -> None:
        if options["build_index"]:
            self._build_index(options["database"])
            return
        owner, query = options["owner"], options["query"]
        if not owner or query is None:
            raise CommandError("give --owner OWNER and a QUERY (or --build-index)")
        try:
            hits = get_chronicarius().search_acta(
                owner,
                query,
                chronica=split_values(options["chronicum"]),
                kinds=split_values(options["kind"]),
                actor_kinds=split_values(options["actor_kind"]),
                actors=split_values(options["actor"]),
                limit=options["limit"],
            )
        except (ChronicaError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        for hit in hits:
            if options["json"]:
                line = json.loads(as_json(hit.actum))
                self.stdout.write(
                    json.dumps(
                        {"actum": line, "rank": hit.rank, "snippet": hit.snippet},
                        ensure_ascii=False,
                    )
                )
                continue
            actum = hit.actum
            at = actum.at.isoformat(timespec="seconds") if actum.at else ""
            self.stdout.write(
                f"{hit.rank:8.4f}  {actum.chronicum_id}  {at}  {actum.kind}"
                f"  {actum.actor_kind}:{actum.actor}\n          {hit.snippet}"
            )
        if not hits and not options["json"]:
            self.stderr.write("no acta match")

    def _build_index(self, alias: str) -> None:
        from chronica.conf import chronica_settings
        from chronica.stores.db.dialects import dialect_of
        from chronica.stores.db.search import INDEX_NAME, build_index

        connection = connections[alias]
        if not dialect_of(connection).features.search_index_built:
            raise CommandError(
                f"--build-index is for PostgreSQL; {connection.display_name} keeps its index"
                " with the triggers of migration 0012"
            )
        config = chronica_settings.SEARCH_CONFIG
        with connection.cursor() as cursor:
            for statement in build_index(config):
                cursor.execute(statement)
        self.stdout.write(f"built {INDEX_NAME} for the text search configuration {config!r}")
