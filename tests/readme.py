"""The README and the documentation pages (docs/), read by section, so that tests run
their snippets as written. A section moved from the README to a page of docs/ is
still found by its ``## title``."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def pages() -> list[Path]:
    """README.md, then every Markdown page of docs/."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def text_of_all() -> str:
    """README.md and the docs pages, one after the other."""
    return "\n".join(page.read_text(encoding="utf-8") for page in pages())


def section(title: str) -> str:
    """The text under ``## title``, up to the next ``## `` heading, in the README or else
    in the page of docs/ that has it."""
    for page in pages():
        text = page.read_text(encoding="utf-8")
        match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
        if match:
            return match[1]
    raise AssertionError(f"neither README.md nor docs/ has a section '## {title}'")


def blocks(text: str, language: str) -> list[str]:
    """The fenced code blocks of ``language`` in ``text``, in order."""
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.M | re.S)


def commands(block: str) -> list[str]:
    """The shell commands of a ``sh`` block: continuation lines joined, comments kept."""
    return [line for line in block.replace("\\\n", " ").splitlines() if line.strip()]
