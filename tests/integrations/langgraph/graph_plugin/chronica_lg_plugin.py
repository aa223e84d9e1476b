"""A pytest plugin that runs LangGraph's own graph tests on ChronicaSaver.

Loaded with ``-p chronica_lg_plugin`` into a pytest run of LangGraph's source
distribution (see ``tests/integrations/langgraph/graph_suite.py``). LangGraph's
checkpointer fixtures build their in-memory saver with ``_checkpointer_memory()`` in
its ``tests/conftest.py``; this plugin puts a ChronicaSaver there (owner ``OWNER``, on
the test database of chronica's own suite, SQLite or PostgreSQL from
``CHRONICA_TEST_DB``), and keeps only the tests that take it (``[memory...]``). The
rows of each test are deleted after it. LangGraph's files are not edited.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chronica_lg_settings")

from chronica_lg_selection import KNOWN_FAILURES, LANGGRAPH_VERSION, TIMING

OWNER = "ardian"
_built: list[int] = [0]


@contextlib.contextmanager
def _checkpointer_chronica() -> Iterator[Any]:
    from chronica.integrations.langgraph import ChronicaSaver

    _built[0] += 1
    yield ChronicaSaver(OWNER)


def pytest_configure(config: pytest.Config) -> None:
    from importlib.metadata import version

    if version("langgraph") != LANGGRAPH_VERSION:
        raise pytest.UsageError(
            f"langgraph {version('langgraph')} is installed, but these are the tests of "
            f"{LANGGRAPH_VERSION}: install that one, or change LANGGRAPH_VERSION."
        )


def pytest_plugin_registered(plugin: Any, manager: Any) -> None:
    # LangGraph's tests/conftest.py imported _checkpointer_memory by name: swap it there.
    if os.environ.get("CHRONICA_LG_BASELINE") == "1":
        return
    if getattr(plugin, "__name__", "") == "tests.conftest" and hasattr(
        plugin, "_checkpointer_memory"
    ):
        plugin._checkpointer_memory = _checkpointer_chronica


def _on_memory(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return False
    return any(
        callspec.params.get(name) == "memory"
        for name in ("sync_checkpointer", "async_checkpointer")
    )


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    kept = [item for item in items if _on_memory(item)]
    config.hook.pytest_deselected(items=[item for item in items if not _on_memory(item)])
    items[:] = kept


_outcomes: dict[str, str] = {}
_errors: dict[str, str] = {}
_exercised: set[str] = set()
_SUMMARY = pytest.StashKey[dict[str, Any]]()


def _on_savers_thread(function: Any) -> None:
    from asgiref.sync import sync_to_async

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(sync_to_async(function)())
    finally:
        loop.close()


@pytest.fixture(scope="session")
def _chronica_test_database(
    django_test_environment: None, django_db_blocker: Any
) -> Iterator[None]:
    """chronica's test database, created once for the whole run."""
    from django.db import connections
    from django.test.utils import setup_databases, teardown_databases

    if os.environ.get("CHRONICA_LG_BASELINE") == "1":
        yield
        return
    with django_db_blocker.unblock():
        config = setup_databases(verbosity=0, interactive=False, aliases={"default"})
    yield
    with django_db_blocker.unblock():
        _on_savers_thread(connections.close_all)
        connections.close_all()
        teardown_databases(config, verbosity=0)


@pytest.fixture(autouse=True)
def _chronica_database(
    request: pytest.FixtureRequest, _chronica_test_database: None, django_db_blocker: Any
) -> Iterator[None]:
    """The database, open to LangGraph's test, and empty again after it."""
    if os.environ.get("CHRONICA_LG_BASELINE") == "1":
        yield
        return
    built = _built[0]
    with django_db_blocker.unblock():
        yield
        if _built[0] != built:
            from chronica.integrations.langgraph.models import (
                LangGraphBlob,
                LangGraphCheckpoint,
                LangGraphMessage,
                LangGraphWrite,
            )
            from chronica.models import Actum, Chronicum

            _exercised.add(request.node.nodeid)
            for model in (LangGraphWrite, LangGraphBlob, LangGraphMessage, LangGraphCheckpoint):
                model.objects.all().delete()
            Actum.objects.all().delete()
            Chronicum.objects.all().delete()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        _outcomes[item.nodeid] = "failed"
        if call.excinfo is not None:
            _errors.setdefault(item.nodeid, call.excinfo.exconly()[:300])
    elif report.skipped:
        _outcomes.setdefault(item.nodeid, "skipped")
    elif report.when == "call":
        _outcomes.setdefault(item.nodeid, "passed")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    by_outcome: dict[str, list[str]] = {"passed": [], "failed": [], "skipped": []}
    for nodeid, outcome in _outcomes.items():
        by_outcome[outcome].append(nodeid)
    failed = set(by_outcome["failed"])
    summary = {
        "langgraph_version": LANGGRAPH_VERSION,
        "saver": "InMemorySaver"
        if os.environ.get("CHRONICA_LG_BASELINE") == "1"
        else "ChronicaSaver",
        "database": os.environ.get("CHRONICA_TEST_DB", "sqlite"),
        "passed": len(by_outcome["passed"]),
        "skipped": len(by_outcome["skipped"]),
        "failed": sorted(failed),
        "errors": {k: _errors.get(k, "") for k in sorted(failed)},
        "on_chronica_and_passed": len(_exercised & set(by_outcome["passed"])),
        "unexpected_failures": sorted(failed - set(KNOWN_FAILURES) - set(TIMING)),
        "timing_failures": sorted(failed & set(TIMING)),
        "known_failures_that_passed": sorted(set(KNOWN_FAILURES) & set(by_outcome["passed"])),
    }
    report = os.environ.get("CHRONICA_LG_REPORT")
    if report:
        Path(report).write_text(json.dumps(summary, indent=2))
    session.config.stash[_SUMMARY] = summary


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    summary = config.stash.get(_SUMMARY, None)
    if summary is None:
        return
    terminalreporter.write_sep("=", f"{summary['saver']} in LangGraph's own graph tests")
    terminalreporter.write_line(
        f"langgraph {summary['langgraph_version']} on {summary['database']}: "
        f"{summary['passed']} passed ({summary['on_chronica_and_passed']} built a ChronicaSaver),"
        f" {len(summary['failed'])} failed, {summary['skipped']} skipped"
    )
    for nodeid in summary["failed"]:
        reason = KNOWN_FAILURES.get(nodeid) or TIMING.get(nodeid)
        reason = reason or "NOT KNOWN: " + summary["errors"].get(nodeid, "")
        terminalreporter.write_line(f"  {nodeid}: {reason}")
