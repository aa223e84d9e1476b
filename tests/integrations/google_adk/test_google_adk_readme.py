"""The README's Google ADK snippet and its state snippet run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chronica import services
from chronica.integrations.google_adk import chronicum_id

from ...readme import blocks, section, text_of_all
from .scenario import STORES, run, using

pytestmark = pytest.mark.django_db(transaction=True)


def adk_snippet() -> str:
    text = text_of_all().split("### Google ADK\n", 1)[1]
    text = re.split(r"^#{2,3} ", text, maxsplit=1, flags=re.M)[0]  # up to the next section
    (block,) = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    return block


@pytest.fixture(params=STORES, autouse=True)
def store(request):
    with using(request.param):
        yield


def test_the_google_adk_snippet_runs_as_written():
    namespace: dict[str, object] = {}
    exec(compile(adk_snippet(), "README.md Google ADK", "exec"), namespace)
    reply = namespace["reply"]

    assert run(reply)("ardian", "dinner-friday", "A quiet table for four?") == (
        "Rumah Teduh, at 7pm."
    )
    run(reply)("ardian", "dinner-friday", "At 7pm, please.")

    cid = chronicum_id("dinner", "ardian", "dinner-friday")
    acta = services.get_acta("ardian", cid, kinds=["message"], last_n=3)
    assert [a.content for a in acta] == [
        "Rumah Teduh, at 7pm.",
        "At 7pm, please.",
        "Rumah Teduh, at 7pm.",
    ]


def test_the_state_snippet_runs_as_written(ardian):
    (block,) = blocks(section("State beside the acta"), "python")
    exec(compile(block, "docs State beside the acta", "exec"), {})

    owner = services.owner_id_for(ardian)  # the snippet's owner, as the API sees ardian
    assert services.get_acta(owner, "dinner-friday")[0].content == "Make it 7pm."


def test_the_docs_page_snippet_runs_as_written():
    """docs/google-adk.md: its one Python block, then the calls its text describes."""
    page = Path(__file__).resolve().parents[3] / "docs" / "google-adk.md"
    (block,) = re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)
    namespace: dict[str, object] = {}
    exec(compile(block, "docs/google-adk.md", "exec"), namespace)

    assert run(namespace["reply"])("ardian", "dinner-friday", "A quiet table for four?") == (
        "Rumah Teduh, at 7pm."
    )
    assert namespace["last_messages"]("ardian", "dinner-friday") == [
        "A quiet table for four?",
        "Rumah Teduh, at 7pm.",
    ]
    cid = chronicum_id("dinner", "ardian", "dinner-friday")
    assert cid == "adk:dinner:ardian:dinner-friday"
