"""``manage.py chronica_follow <chronicum_id> --owner ID``: print acta as they are recorded.

A ``tail -f`` for operators: it follows through ``chronica.services.afollow``, so
it sees what that owner's agents see (someone else's chronicum is not found), and
runs until interrupted (Ctrl-C) or, with ``--count N``, until N acta came.
"""

from __future__ import annotations

import asyncio
import contextlib
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from chronica import services
from chronica.errors import ChronicumNotFound, InvalidQuery
from chronica.management.pipes import quiet_when_the_reader_leaves
from chronica.validation.parameters import FOLLOW_PARAMETERS
from chronica.values import Actum

from .chronica_show import add_window_arguments, as_json, window_arguments


def as_line(actum: Actum) -> str:
    """One actum: its time, kind, actor and content; content lines after the first
    are indented under the first."""
    at = f"{actum.at:%H:%M:%S}" if actum.at else "--:--:--"
    head = f"{at}  {actum.kind!s:<13}  {actum.actor} ({actum.actor_kind})  "
    first, *rest = actum.content.split("\n")
    return "\n".join([(head + first).rstrip(), *((" " * len(head) + line) for line in rest)])


class Command(BaseCommand):
    help = (
        "Print the acta of one chronicum as they are recorded (a tail -f), from now or"
        " after a given actum, filtered like an agent's context window."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("chronicum_id")
        parser.add_argument("--owner", required=True, help="the owner ID of the chronicum")
        add_window_arguments(parser, FOLLOW_PARAMETERS)
        parser.add_argument(
            "--count", type=int, default=0, metavar="N", help="stop after N acta (0: never)"
        )
        parser.add_argument("--json", action="store_true", help="one JSON object per line")

    def handle(self, *args: Any, **options: Any) -> None:
        with quiet_when_the_reader_leaves(), contextlib.suppress(KeyboardInterrupt):
            asyncio.run(self.follow(options))

    async def follow(self, options: dict[str, Any]) -> None:
        chronicum_id, owner = options["chronicum_id"], options["owner"]
        acta = services.afollow(owner, chronicum_id, **window_arguments(options, FOLLOW_PARAMETERS))
        printed = 0
        try:
            async with contextlib.aclosing(acta):
                async for actum in acta:
                    self.stdout.write(as_json(actum) if options["json"] else as_line(actum))
                    self.stdout.flush()
                    printed += 1
                    if printed == options["count"]:
                        return
        except ChronicumNotFound:
            raise CommandError(
                f"no chronicum with ID {chronicum_id!r} for owner {owner!r}"
            ) from None
        except InvalidQuery as exc:
            raise CommandError(str(exc)) from None
