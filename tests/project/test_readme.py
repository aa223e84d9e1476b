"""The README's Python examples run as written (the install test runs its shell lines)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.readme import blocks, section


@pytest.mark.django_db
def test_the_quickstart_runs_as_written_and_again(ardian: Any, capsys: Any) -> None:
    (quickstart,) = blocks(section("Quickstart"), "python")
    code = compile(quickstart, "README.md quickstart", "exec")

    exec(code, {})
    exec(code, {})  # pasted twice: a second session, no error

    # It prints the path (the port is runserver's to say), not a fixed http://...:8000.
    urls = re.findall(r"^(/api/chronica/\S+/acta/)$", capsys.readouterr().out, flags=re.M)
    assert len(urls) == 2
    assert urls[0] != urls[1]
    # What the quickstart recorded for ardian's owner ID is ardian's in the API.
    client = APIClient()
    client.force_authenticate(ardian)
    answer = client.get(urls[1], HTTP_ACCEPT="application/json")
    assert answer.status_code == 200
    assert [a["actor"] for a in answer.json()] == ["ardian", "booking"]


@pytest.mark.django_db(transaction=True)
def test_a_long_session_a_branch_recall_and_forgetting_run_as_written() -> None:
    """docs/compaction.md's example, from the README's section on long sessions."""
    (example,) = blocks(section("A long session, a branch, recall and forgetting"), "python")
    namespace: dict[str, Any] = {}
    exec(compile(example, "docs/compaction.md", "exec"), namespace)
    from chronica import services

    owner, dinner = namespace["owner"], namespace["dinner"]
    assert [a.content for a in services.get_acta(owner, namespace["branch"].id)] == [
        namespace["ask"].content,
        namespace["reply"].content,
    ]
    assert services.get_acta(owner, dinner.id)[1].redacted is not None


def test_who_is_the_owner_is_python() -> None:
    for block in blocks(section("Who is the owner"), "python"):
        compile(block, "README.md who is the owner", "exec")


def test_the_conformance_example_runs_as_written() -> None:
    (example,) = blocks(section("Stores"), "python")
    from chronica.stores.memory import InMemoryStore

    namespace: dict[str, Any] = {"MyStore": InMemoryStore}
    exec(compile(example, "README.md conformance", "exec"), namespace)
    for name in ("TestMyStore", "TestMyStoreIdempotent"):
        suite = namespace[name]()
        for case in dir(suite):
            if case.startswith("test_"):
                getattr(suite, case)()


@pytest.mark.django_db(transaction=True)
def test_batches_windows_and_sessions_run_as_written(ardian: Any) -> None:
    namespace: dict[str, Any] = {}
    for title in (
        "Structured acta and batches",
        "Context windows",
        "Sessions: create, list, delete, pop",
    ):
        for block in blocks(section(title), "python"):
            exec(compile(block, f"README.md {title}", "exec"), namespace)
    from chronica import services

    window = namespace["window"]
    assert [a.kind for a in window] == ["tool_request", "tool_response", "message"]
    assert namespace["older"] == []
    assert namespace["acta_page"].acta[0].content == 'search_places(area="Kemang", party=4)'
    assert namespace["newest"].content == "Rumah Teduh and Kayu Manis both have a table."
    owner = services.owner_id_for(ardian)  # the examples' owner, as the API sees ardian
    assert [a.content for a in services.get_acta(owner, "dinner-saturday")] == [
        'search_places(area="Kemang", party=4)',
        "Rumah Teduh, Kayu Manis",
    ]


def test_the_agent_framework_snippets_are_python() -> None:
    import ast

    for block in blocks(section("Agent frameworks"), "python"):
        compile(block, "README.md agent frameworks", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
