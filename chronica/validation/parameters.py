"""Every argument of a context window and of a follow, declared once for the edges."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re

from ..values import FILTERS


@dataclasses.dataclass(frozen=True, slots=True)
class Parameter:
    """One argument of a context window or of a follow, as the edges spell it.

    The API's query parameters, their OpenAPI description and the commands' flags
    are all made from :data:`PARAMETERS`; what a value may be is judged once, by
    :func:`build_query` (and ``check_whole_tool_calls``, ``check_after``), with the
    keyword arguments the edges read.
    """

    name: str
    """``?name=`` in the API, ``--name`` (``_`` as ``-``) on the command line."""
    argument: str
    """The keyword argument of ``services.get_acta`` (and ``afollow``) it gives."""
    type: type[str] | type[int] | type[bool]
    help: str
    """What it does, in a few lowercase words (the commands show it as it is)."""
    repeatable: bool = False
    """Given several times, a list (and in the API, comma-separated values too)."""
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    window: bool = True
    """Whether ``get_acta`` (and the window's API call and ``chronica_show``) take it."""
    follow: bool = False
    """Whether ``afollow`` (and the stream and ``chronica_follow``) take it."""
    command: bool = True
    """Whether the management commands offer it."""


PARAMETERS: tuple[Parameter, ...] = (
    *(
        Parameter(
            f.name,
            f.field,
            str,
            f.help,
            repeatable=True,
            choices=tuple(m.value for m in f.choices) if f.choices is not None else (),
            follow=True,
        )
        for f in FILTERS
    ),
    Parameter(
        "last_n",
        "last_n",
        int,
        "after the filters, only the newest N acta (0 or less: no limit)",
    ),
    Parameter(
        "max_tokens",
        "max_tokens",
        int,
        "after the filters, only the newest acta whose token counts add up to at most N;"
        " the first that does not fit ends the window",
        minimum=0,
    ),
    Parameter(
        "whole_tool_calls",
        "whole_tool_calls",
        bool,
        "leave out every tool response whose tool request (the same call_id) is not in"
        " the window, so that no model gets a result without its call",
        command=False,
    ),
    Parameter(
        "before",
        "before",
        str,
        "an actum ID of this chronicum: the window is taken from the acta recorded before it",
        command=False,
    ),
    Parameter(
        "compacted",
        "compacted",
        bool,
        "the compacted view: the newest compaction's acta, then the acta recorded after"
        " its through that belong to no compaction",
        follow=True,
    ),
    Parameter(
        "after",
        "after",
        str,
        "an actum ID of this chronicum: start after it (absent: from now)",
        window=False,
        follow=True,
    ),
)
"""Every argument of a window and of a follow, each declared once."""

WINDOW_PARAMETERS = tuple(p for p in PARAMETERS if p.window)
"""What ``get_acta`` takes (and the window's API call, and ``chronica_show``)."""
FOLLOW_PARAMETERS = tuple(p for p in PARAMETERS if p.follow)
"""What ``afollow`` takes (and the stream, and ``chronica_follow``)."""


def parse_duration(text: str) -> dt.timedelta:
    """``90s``, ``15m``, ``12h``, ``7d``, ``2w``: a duration; anything else ``ValueError``."""
    match = re.fullmatch(r"\s*(\d+)\s*([smhdw])\s*", text or "")
    if not match:
        raise ValueError(f"a duration is a number and s, m, h, d or w (7d), not {text!r}")
    unit = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
    return dt.timedelta(**{unit[match[2]]: int(match[1])})
