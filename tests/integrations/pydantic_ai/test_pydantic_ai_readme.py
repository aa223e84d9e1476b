"""The README's PydanticAI snippet runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chronica import services

from ...readme import pages
from .scenario import run

ROOT = Path(__file__).resolve().parents[3]
SECTION = "## PydanticAI"


def snippet() -> str:
    for source in pages():  # README.md, then docs/
        text = source.read_text()
        if SECTION in text:
            section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
            (block,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
            return block
    raise AssertionError("no PydanticAI section in README.md")


@pytest.mark.django_db
def test_the_pydantic_ai_snippet_runs_as_written():
    namespace: dict[str, object] = {}
    exec(compile(snippet(), "README.md PydanticAI", "exec"), namespace)
    reply = namespace["reply"]

    assert run(reply)("ardian", "dinner-friday", "A quiet table for four?") == (
        "Rumah Teduh, at 7pm."
    )
    run(reply)("ardian", "dinner-friday", "At 7pm, please.")

    acta = services.get_acta("ardian", "dinner-friday", kinds=["message"], last_n=3)
    assert [a.content for a in acta] == [
        "Rumah Teduh, at 7pm.",
        "At 7pm, please.",
        "Rumah Teduh, at 7pm.",
    ]
