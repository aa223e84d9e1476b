"""The README, read by section, so that tests run its snippets as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def section(title: str) -> str:
    """The text under ``## title``, up to the next ``## `` heading."""
    text = README.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    assert match, f"README.md has no section '## {title}'"
    return match[1]


def blocks(text: str, language: str) -> list[str]:
    """The fenced code blocks of ``language`` in ``text``, in order."""
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.M | re.S)


def commands(block: str) -> list[str]:
    """The shell commands of a ``sh`` block: continuation lines joined, comments kept."""
    return [line for line in block.replace("\\\n", " ").splitlines() if line.strip()]
