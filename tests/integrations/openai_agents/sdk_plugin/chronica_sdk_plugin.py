"""A pytest plugin that runs the OpenAI Agents SDK's own tests on ChronicaSession.

Loaded with ``-p chronica_sdk_plugin`` into a pytest run of the SDK's source
distribution (see ``tests/integrations/openai_agents/sdk.py``). In each of its test modules the
name ``SQLiteSession`` becomes :class:`SQLiteSessionOnChronica`, a ChronicaSession
with SQLiteSession's constructor; the SDK's files are not edited.
Module-level subclasses of SQLiteSession in those modules are rebased onto it, and
subclasses defined inside a test pick it up by name. The sessions write through
``chronica.services`` into the test database of chronica's own suite (SQLite or
PostgreSQL, from ``CHRONICA_TEST_DB``), wiped after each test that used one.

Only tests about SQLite internals are deselected, each for the reason given in
``chronica_sdk_selection.DESELECTED``; a listed test that no longer exists fails the
run, so the list cannot go stale silently.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chronica_sdk_settings")

from agents import SQLiteSession
from chronica_sdk_selection import DESELECTED, SDK_VERSION

from chronica.integrations.openai_agents import ChronicaSession

OWNER = "ardian"


class SQLiteSessionOnChronica(ChronicaSession):
    """ChronicaSession behind SQLiteSession's constructor, as the SDK's tests call it.

    ``db_path`` and the table names mean nothing to chronica: every session of a test
    writes into chronica's test database, as ``OWNER``.
    """

    built = 0

    def __init__(
        self,
        session_id: str,
        db_path: str | Path = ":memory:",
        sessions_table: str = "agent_sessions",
        messages_table: str = "agent_messages",
        session_settings: Any = None,
    ) -> None:
        super().__init__(session_id, owner_id=OWNER, session_settings=session_settings)
        self.db_path = db_path
        SQLiteSessionOnChronica.built += 1

    def close(self) -> None:
        """Nothing to close: chronica's connections belong to Django."""


def _swap(module: Any) -> None:
    if getattr(module, "SQLiteSession", None) is SQLiteSession:
        module.SQLiteSession = SQLiteSessionOnChronica
    for name, value in list(vars(module).items()):
        if (
            isinstance(value, type)
            and value is not SQLiteSession
            and SQLiteSession in value.__bases__
        ):
            setattr(module, name, _rebased(value))


def _rebased(cls: type) -> type:
    """``cls`` built again on SQLiteSessionOnChronica instead of SQLiteSession."""
    bases = tuple(SQLiteSessionOnChronica if b is SQLiteSession else b for b in cls.__bases__)
    namespace = {k: v for k, v in vars(cls).items() if k not in ("__dict__", "__weakref__")}
    rebuilt = type(cls.__name__, bases, namespace)
    # Zero-argument super() in the methods finds the class through a closure cell.
    for member in namespace.values():
        function = getattr(member, "__func__", member)
        code = getattr(function, "__code__", None)
        if code is not None and "__class__" in code.co_freevars:
            function.__closure__[code.co_freevars.index("__class__")].cell_contents = rebuilt
    return rebuilt


def pytest_configure(config: pytest.Config) -> None:
    from importlib.metadata import version

    if version("openai-agents") != SDK_VERSION:
        raise pytest.UsageError(
            f"openai-agents {version('openai-agents')} is installed, but these are the tests "
            f"of {SDK_VERSION}: install that one, or change SDK_VERSION with a new run."
        )


def _names(nodeid: str) -> set[str]:
    """The names a DESELECTED entry may give a test by: its node ID, the same without its
    parameters, its module."""
    return {nodeid, nodeid.split("[")[0], nodeid.split("::")[0]}


def _deselected(item: pytest.Item) -> bool:
    return not _names(item.nodeid).isdisjoint(DESELECTED)


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    collected = set().union(*(_names(item.nodeid) for item in items))
    modules = {item.nodeid.split("::")[0] for item in items}
    unknown = {n for n in DESELECTED if n.split("::")[0] in modules and n not in collected}
    if unknown:
        raise pytest.UsageError(
            "DESELECTED names tests that were not collected (renamed or removed in this "
            f"SDK version?): {sorted(unknown)}"
        )
    global _deselected_count
    deselected = [item for item in items if _deselected(item)]
    _deselected_count = len(deselected)
    config.hook.pytest_deselected(items=deselected)
    items[:] = [item for item in items if not _deselected(item)]
    for module in {id(item.module): item.module for item in items if item.module}.values():
        _swap(module)


_exercised: list[str] = []
_outcomes: dict[str, str] = {}
_deselected_count = 0
_SUMMARY = pytest.StashKey[dict[str, Any]]()


def _on_sessions_thread(function: Any) -> None:
    # The sessions' queries run on sync_to_async's executor thread; its connection is
    # closed there. A loop of its own, never set as the thread's current loop: the
    # SDK's tests share one session-wide loop that must stay in place.
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
    """chronica's test database, created once for the whole run.

    pytest-django creates databases only for tests marked ``django_db``; the SDK's
    tests carry no mark, and a mark would wrap each in a transaction or a flush.
    """
    from django.db import connections
    from django.test.utils import setup_databases, teardown_databases

    with django_db_blocker.unblock():
        config = setup_databases(verbosity=0, interactive=False, aliases={"default"})
    yield
    with django_db_blocker.unblock():
        _on_sessions_thread(connections.close_all)
        teardown_databases(config, verbosity=0)


@pytest.fixture(autouse=True)
def _chronica_database(
    request: pytest.FixtureRequest, _chronica_test_database: None, django_db_blocker: Any
) -> Iterator[None]:
    """The database, open to the SDK's test, and empty again after it."""
    built = SQLiteSessionOnChronica.built
    with django_db_blocker.unblock():
        yield
        if SQLiteSessionOnChronica.built != built:
            from chronica.models import Actum, Chronicum

            _exercised.append(request.node.nodeid)
            Actum.objects.all().delete()
            Chronicum.objects.all().delete()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        _outcomes[item.nodeid] = "failed"
    elif report.skipped:
        _outcomes.setdefault(item.nodeid, "skipped")
    elif report.when == "call":
        _outcomes.setdefault(item.nodeid, "passed")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    by_outcome: dict[str, list[str]] = {"passed": [], "failed": [], "skipped": []}
    for nodeid, outcome in _outcomes.items():
        by_outcome[outcome].append(nodeid)
    summary = {
        "sdk_version": SDK_VERSION,
        "database": os.environ.get("CHRONICA_TEST_DB", "sqlite"),
        "passed": len(by_outcome["passed"]),
        "failed": sorted(by_outcome["failed"]),
        "skipped": sorted(by_outcome["skipped"]),
        "built_a_session_and_passed": len(set(_exercised) & set(by_outcome["passed"])),
        "deselected_tests": _deselected_count,
        "deselected": DESELECTED,
    }
    report = os.environ.get("CHRONICA_SDK_REPORT")
    if report:
        Path(report).write_text(json.dumps(summary, indent=2))
    session.config.stash[_SUMMARY] = summary


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    summary = config.stash.get(_SUMMARY, None)
    if summary is None:
        return
    terminalreporter.write_sep("=", "ChronicaSession in the SDK's own tests")
    terminalreporter.write_line(
        f"openai-agents {summary['sdk_version']} on {summary['database']}: "
        f"{summary['passed']} passed, {summary['built_a_session_and_passed']} of them on a "
        f"ChronicaSession; {summary['deselected_tests']} deselected, SQLite internals:"
    )
    for nodeid, reason in DESELECTED.items():
        terminalreporter.write_line(f"  {nodeid}: {reason}")
