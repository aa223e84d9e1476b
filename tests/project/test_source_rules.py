"""Rules of ``chronica/``'s source a reviewer would otherwise check by hand: no module too
long to read in one sitting, no reach into private machinery (Python's or Django's), and
comments that say why rather than when."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import chronica

ROOT = Path(chronica.__file__).parent
MAX_LINES = 500


def sources() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if "migrations" not in p.parts)


def test_no_module_is_over_500_lines():
    long = {
        str(p.relative_to(ROOT)): n
        for p in sources()
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def lines_matching(
    pattern: str, *, among: list[Path] | None = None, read: Callable[[str], str] = str
) -> list[str]:
    """``path:line: text`` of each line of ``among`` (every source) where ``pattern``
    is found in ``read(line)``."""
    found = re.compile(pattern)
    return [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
        for p in (sources() if among is None else among)
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if found.search(read(line))
    ]


def test_no_private_machinery():
    """Frames' locals, Django's registries and private views, forged instances."""
    assert lines_matching(r"f_locals|_registry|_delete_view|__dict__\.update|_session_util") == []


def test_no_issue_numbers_in_comments():
    """The history of a line is in git; a comment says why it is there."""
    assert lines_matching(r"#.*\b[Ii]ssue \d+|\(issue \d+\)") == []


def test_no_tricks_of_the_second_architecture():
    """Acta forged by ``__class__`` assignment, the garbage collector paused on request
    threads, the caller's event loop patched: none of it comes back."""
    assert lines_matching(r"__class__ =|gc\.disable|gc\.freeze|loop\.close\b|\.close = ") == []


def test_only_the_dialects_ask_the_vendor():
    """A way a database differs with chronica's tables is a method of its dialect or a
    flag of its features (``chronica/stores/db``); only the choice of the dialect asks
    ``vendor``. (An integration keeps tables of its own and reaches chronica's only
    through the services: it asks Django's connection as any Django app does. The
    migrations are left out of ``sources()``.)"""
    chooser = ROOT / "stores" / "db" / "dialects.py"
    among = [p for p in sources() if p != chooser and "integrations" not in p.parts]
    quoted = re.compile(r"``[^`]*``")  # (not where a docstring names it)
    assert lines_matching(r"\.vendor\b", among=among, read=lambda line: quoted.sub("", line)) == []
