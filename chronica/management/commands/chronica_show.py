"""``manage.py chronica_show <chronicum_id>``: print a transcript in write order.

An operator tool: it reads through the configured store, whoever owns the
chronicum, and filters with the same validation as ``chronica.services``.
"""

from __future__ import annotations

import json
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from chronica.errors import ChronicumNotFound
from chronica.services import get_chronicarius
from chronica.validation import build_query
from chronica.values import Actum


def _split(values: list[str] | None) -> list[str] | None:
    """``--kind message --kind thought`` and ``--kind message,thought`` mean the same."""
    if not values:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def as_json(actum: Actum) -> str:
    """One actum as one JSON line, with the fields and names of the HTTP API."""
    return json.dumps(
        {
            "id": actum.id,
            "chronicum_id": actum.chronicum_id,
            "kind": str(actum.kind),
            "actor_kind": str(actum.actor_kind),
            "actor": actum.actor,
            "content": actum.content,
            "at": actum.at.isoformat() if actum.at else None,
        },
        ensure_ascii=False,
    )


def as_table(acta: list[Actum]) -> list[str]:
    """Columns KIND, ACTOR and CONTENT, aligned; content lines after the first stay in
    the content column."""
    rows = [(str(a.kind), f"{a.actor} ({a.actor_kind})", a.content) for a in acta]
    kind_width = max([len("KIND"), *(len(r[0]) for r in rows)])
    actor_width = max([len("ACTOR"), *(len(r[1]) for r in rows)])
    indent = " " * (kind_width + actor_width + 4)
    lines = [f"{'KIND':<{kind_width}}  {'ACTOR':<{actor_width}}  CONTENT"]
    for kind, actor, content in rows:
        first, *rest = content.split("\n")
        lines.append(f"{kind:<{kind_width}}  {actor:<{actor_width}}  {first}".rstrip())
        lines.extend((indent + line).rstrip() for line in rest)
    return lines


class Command(BaseCommand):
    help = (
        "Print the acta of one chronicum in write order, as a table or as JSON lines."
        " Filters run before --last-n, as for an agent's context window."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("chronicum_id")
        parser.add_argument(
            "--kind",
            action="append",
            metavar="K",
            help="message, thought, tool_request or tool_response (repeatable)",
        )
        parser.add_argument(
            "--actor-kind",
            action="append",
            metavar="K",
            help="human, agent or system (repeatable)",
        )
        parser.add_argument(
            "--last-n", type=int, default=0, metavar="N", help="only the last N (0: all)"
        )
        parser.add_argument("--json", action="store_true", help="one JSON object per line")

    def handle(self, *args: Any, **options: Any) -> None:
        chronicum_id: str = options["chronicum_id"]
        try:
            query = build_query(
                _split(options["kind"]), _split(options["actor_kind"]), options["last_n"]
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        store = get_chronicarius().store
        try:
            store.get(chronicum_id)
            acta = store.acta(chronicum_id, query)
        except ChronicumNotFound:
            raise CommandError(f"no chronicum with ID {chronicum_id!r}") from None
        lines = [as_json(a) for a in acta] if options["json"] else as_table(acta)
        for line in lines:
            self.stdout.write(line)
