"""``manage.py chronica_show``: print a transcript in write order, or list an owner's chronica.

An operator tool: it reads any owner's chronicum. The window is read through the
configured Chronicarius as the chronicum's owner, so its flags (``--kind``,
``--last-n``, ``--max-tokens``..., one for each of ``chronica.validation.PARAMETERS``
the commands offer) behave exactly as ``chronica.services.get_acta``.
"""

from __future__ import annotations

import json
from argparse import ArgumentParser
from collections.abc import Iterable, Iterator
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from chronica import services
from chronica.errors import ChronicumNotFound, InvalidQuery
from chronica.management.pipes import quiet_when_the_reader_leaves
from chronica.services import get_chronicarius
from chronica.services.identity import provenance
from chronica.validation.parameters import WINDOW_PARAMETERS, Parameter
from chronica.values import Actum, Chronicum

SHOWN_CHARS = 4096
"""The table shows at most this many characters of an actum's content (and of its
data); ``--full`` shows all of it."""

LIST_PAGE = 1000


def split_values(values: list[str] | None) -> list[str] | None:
    """``--kind message --kind thought`` and ``--kind message,thought`` mean the same."""
    if not values:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _flag(parameter: Parameter) -> str:
    return "--" + parameter.name.replace("_", "-")


def add_window_arguments(parser: ArgumentParser, parameters: Iterable[Parameter]) -> None:
    """A flag for each of ``parameters`` the commands offer (``--kind``, ``--last-n``...),
    made from its declaration in ``chronica.validation.PARAMETERS``."""
    for parameter in parameters:
        if not parameter.command:
            continue
        help = parameter.help
        if parameter.choices:
            help += f": {', '.join(parameter.choices)}"
        if parameter.repeatable:
            parser.add_argument(
                _flag(parameter),
                action="append",
                metavar="K" if parameter.choices else "ID",
                help=f"{help} (repeatable)",
            )
        elif parameter.type is int:
            parser.add_argument(_flag(parameter), type=int, metavar="N", help=help)
        elif parameter.type is bool:
            parser.add_argument(_flag(parameter), action="store_const", const=True, help=help)
        else:
            parser.add_argument(_flag(parameter), metavar="ID", help=help)


def window_arguments(options: dict[str, Any], parameters: Iterable[Parameter]) -> dict[str, Any]:
    """The keyword arguments of ``chronica.services`` that the flags of
    :func:`add_window_arguments` give (each one given; the others keep the defaults)."""
    found: dict[str, Any] = {}
    for parameter in parameters:
        value = options.get(parameter.name) if parameter.command else None
        if value is None:
            continue
        found[parameter.argument] = split_values(value) if parameter.repeatable else value
    return found


def window_flags(parameters: Iterable[Parameter]) -> str:
    """The flags of ``parameters``, for a message: ``--kind, --actor-kind and --last-n``."""
    flags = [_flag(p) for p in parameters if p.command]
    return ", ".join(flags[:-1]) + f" and {flags[-1]}" if len(flags) > 1 else "".join(flags)


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
            "call_id": actum.call_id,
            "data": actum.data,
            "recorded_by": actum.recorded_by,
            "redacted": None
            if actum.redacted is None
            else {"at": actum.redacted.at.isoformat(), "reason": actum.redacted.reason},
            "compacts": actum.compacts,
        },
        ensure_ascii=False,
    )


def cut(text: str, full: bool) -> list[str]:
    """``text`` as lines, the first ``SHOWN_CHARS`` characters of it unless ``full``,
    with a last line saying how much was left out."""
    if full or len(text) <= SHOWN_CHARS:
        return text.split("\n")
    left_out = len(text) - SHOWN_CHARS
    return [
        *text[:SHOWN_CHARS].split("\n"),
        f"[… {left_out:,} more of {len(text):,} characters not shown; --full shows all]",
    ]


def content_lines(actum: Actum, full: bool) -> list[str]:
    """What the CONTENT column holds for an actum: its content, then its call ID and
    its data (compact JSON) when it has them."""
    lines = cut(actum.content, full) if actum.content else [""]
    if actum.redacted is not None:
        why = f": {actum.redacted.reason}" if actum.redacted.reason else ""
        lines = [f"[redacted {actum.redacted.at:%Y-%m-%d %H:%M} UTC{why}]"]
    if actum.call_id:
        lines.append(f"call_id: {actum.call_id}")
    if actum.data is not None:
        data = cut(json.dumps(actum.data, ensure_ascii=False), full)
        lines += [f"data: {data[0]}", *data[1:]]
    if lines[0] == "" and len(lines) > 1:
        lines.pop(0)
    return lines


_COLUMNS = ("KIND", "ACTOR", "BY")


def as_table(acta: list[Actum], *, full: bool = False) -> list[str]:
    """Columns KIND, ACTOR, BY (who wrote it, worded as the admin transcript words it:
    ``owner``, ``credential <key ID>``, ``not attested``) and CONTENT, aligned; content
    lines after the first stay in the content column."""
    rows = [
        (
            str(a.kind),
            f"{a.actor} ({a.actor_kind})",
            provenance(a.recorded_by),
            content_lines(a, full),
        )
        for a in acta
    ]
    widths = [max([len(title), *(len(r[i]) for r in rows)]) for i, title in enumerate(_COLUMNS)]
    indent = " " * (sum(widths) + 2 * len(widths))
    lines = ["  ".join(f"{t:<{w}}" for t, w in zip(_COLUMNS, widths, strict=True)) + "  CONTENT"]
    for *cells, (first, *rest) in rows:
        head = "  ".join(f"{c:<{w}}" for c, w in zip(cells, widths, strict=True))
        lines.append(f"{head}  {first}".rstrip())
        lines.extend((indent + line).rstrip() for line in rest)
    return lines


def chronicum_json(chronicum: Chronicum) -> str:
    """One chronicum as one JSON line, as the HTTP API lists it."""
    return json.dumps(
        {
            "id": chronicum.id,
            "owner_id": chronicum.owner_id,
            "started_at": chronicum.started_at.isoformat(),
            "last_activity_at": chronicum.last_activity_at.isoformat(),
        },
        ensure_ascii=False,
    )


def all_chronica(owner_id: str) -> Iterator[Chronicum]:
    """Every chronicum of the owner, latest activity first, a page at a time."""
    before: Chronicum | None = None
    while True:
        page = services.list_chronica(owner_id, limit=LIST_PAGE, before=before)
        yield from page
        if len(page) < LIST_PAGE:
            return
        before = page[-1]


class Command(BaseCommand):
    help = (
        "Print the acta of one chronicum in write order, as a table or as JSON lines;"
        " with --owner and no ID, list that owner's chronica, latest activity first."
        " Filters run before --last-n and --max-tokens, as for an agent's context window."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("chronicum_id", nargs="?")
        parser.add_argument(
            "--owner",
            metavar="ID",
            help="without a chronicum ID: list this owner's chronica; with one: read it"
            " only if it is this owner's",
        )
        add_window_arguments(parser, WINDOW_PARAMETERS)
        parser.add_argument(
            "--json", action="store_true", help="one JSON object per line, every actum whole"
        )
        parser.add_argument(
            "--full",
            action="store_true",
            help=f"show every character of each actum (the table shows {SHOWN_CHARS:,})",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        with quiet_when_the_reader_leaves():
            self.show_or_list(options)

    def show_or_list(self, options: dict[str, Any]) -> None:
        chronicum_id: str | None = options["chronicum_id"]
        owner_id: str | None = options["owner"]
        if chronicum_id is None:
            if owner_id is None:
                raise CommandError(
                    "give a chronicum ID to print its acta, or --owner ID to list that"
                    " owner's chronica"
                )
            if window_arguments(options, WINDOW_PARAMETERS):
                raise CommandError(f"{window_flags(WINDOW_PARAMETERS)} need an ID")
            self.list_chronica(owner_id, as_json=options["json"])
            return
        self.show(chronicum_id, owner_id, options)

    def list_chronica(self, owner_id: str, *, as_json: bool) -> None:
        listed = 0
        try:
            for chronicum in all_chronica(owner_id):
                if as_json:
                    self.stdout.write(chronicum_json(chronicum))
                else:
                    if not listed:
                        self.stdout.write(f"{'LAST ACTIVITY':<25}  {'STARTED':<25}  ID")
                    self.stdout.write(
                        f"{chronicum.last_activity_at.isoformat(timespec='seconds'):<25}"
                        f"  {chronicum.started_at.isoformat(timespec='seconds'):<25}"
                        f"  {chronicum.id}"
                    )
                listed += 1
        except ValueError as exc:  # EmptyOwnerID
            raise CommandError(str(exc)) from exc
        if not listed and not as_json:
            self.stdout.write(f"Owner {owner_id!r} has no chronica.")

    def show(self, chronicum_id: str, owner_id: str | None, options: dict[str, Any]) -> None:
        chronicarius = get_chronicarius()
        missing = f"no chronicum with ID {chronicum_id!r}" + (
            f" of owner {owner_id!r}" if owner_id is not None else ""
        )
        window = window_arguments(options, WINDOW_PARAMETERS)
        try:
            if owner_id is None:
                owner_id = chronicarius.store.get(chronicum_id).owner_id
            acta = chronicarius.get_acta(owner_id, chronicum_id, **window)
            empty = not acta and not (
                window and chronicarius.get_acta(owner_id, chronicum_id, last_n=1)
            )
        except ChronicumNotFound:
            raise CommandError(missing) from None
        except InvalidQuery as exc:
            raise CommandError(str(exc)) from exc
        except ValueError as exc:  # EmptyOwnerID
            raise CommandError(str(exc)) from exc
        if options["json"]:
            for actum in acta:
                self.stdout.write(as_json(actum))
        elif empty:
            self.stdout.write(f"{chronicum_id!r} has no acta yet.")
        elif not acta:
            self.stdout.write(f"No acta of {chronicum_id!r} match these options.")
        else:
            for line in as_table(acta, full=options["full"]):
                self.stdout.write(line)
