"""Rules of ``chronica/``'s source a reviewer would otherwise check by hand: no module too
long to read in one sitting, no reach into private machinery (Python's or Django's), and
comments that say why rather than when."""

from __future__ import annotations

import re
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


def test_no_private_machinery():
    """Frames' locals, Django's registries and private views, forged instances."""
    forbidden = re.compile(r"f_locals|_registry|_delete_view|__dict__\.update|_session_util")
    found = [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
        for p in sources()
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if forbidden.search(line)
    ]
    assert found == []


def test_no_issue_numbers_in_comments():
    """The history of a line is in git; a comment says why it is there."""
    issue = re.compile(r"#.*\b[Ii]ssue \d+|\(issue \d+\)")
    found = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in sources()
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if issue.search(line)
    ]
    assert found == []
