from __future__ import annotations

import os
import socket
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.core.management.color import no_style
from django.db import connection, connections
from django.test import TransactionTestCase
from hypothesis import settings

# Every property test draws the same examples on every run: a build must not pass or
# fail by the draw. CHRONICA_HYPOTHESIS=random draws new ones, to search by hand.
settings.register_profile("derandomized", derandomize=True)
settings.register_profile("random", derandomize=False)
settings.load_profile(
    "random" if os.environ.get("CHRONICA_HYPOTHESIS") == "random" else "derandomized"
)


# The rows migrate wrote once (content types, permissions): a transactional test's
# flush keeps them. Django's flush empties them and rebuilds them through post_migrate
# after every such test, a commit per app, 0.3 s a test on SQLite: most of the
# suite's time. Nothing in chronica listens to post_migrate, and no test adds a
# content type or a permission.
KEPT_BY_FLUSH = frozenset({"django_content_type", "auth_permission"})
_django_fixture_teardown = TransactionTestCase._fixture_teardown


def _flush_keeping_migrate_rows(self: TransactionTestCase) -> None:
    if self.serialized_rollback or self.available_apps is not None:
        _django_fixture_teardown(self)
        return
    for alias in self._databases_names(include_mirrors=False):
        here = connections[alias]
        tables = [
            table
            for table in here.introspection.django_table_names(
                only_existing=True, include_views=False
            )
            if table not in KEPT_BY_FLUSH
        ]
        if here.vendor == "postgresql":
            # DELETE, not TRUNCATE: a TRUNCATE of every table swaps each one's files, 0.12 s
            # a test; these tables hold a test's few rows. Every foreign key is deferred
            # (Django's and chronica's), so the order does not matter.
            statements = [f"DELETE FROM {here.ops.quote_name(table)}" for table in tables]
        else:
            statements = here.ops.sql_flush(no_style(), tables)
        here.ops.execute_sql_flush(statements)


TransactionTestCase._fixture_teardown = _flush_keeping_migrate_rows  # type: ignore[method-assign]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``make test`` runs the once-per-build checks in the newest pair's legs only; the
    newest pair's two suite legs each run half of the test files; and each half of the
    slow tests runs on one leg of the venv's pair (scripts/ci.py): the other legs skip or
    deselect them, saying where they run."""
    if os.environ.get("CHRONICA_ONCE") == "elsewhere":
        elsewhere = pytest.mark.skip(
            reason="once per build: make test runs it in the newest pair's legs (scripts/ci.py)"
        )
        for item in items:
            if item.get_closest_marker("once") is not None:
                item.add_marker(elsewhere)
    files = os.environ.get("CHRONICA_FILES")
    if files in HALVES:
        kept: list[pytest.Item] = []
        other: list[pytest.Item] = []
        for item in items:
            (kept if _half(item) in (files, None) else other).append(item)
        if other:
            config.hook.pytest_deselected(items=other)
            items[:] = kept
    half = os.environ.get("CHRONICA_SLOW")
    if half in HALVES:
        skip = pytest.mark.skip(
            reason=f"slow, the {HALVES[1 - HALVES.index(half)]}: make test runs each half"
            " of the files on one leg of each database and one of each pair (scripts/ci.py)"
        )
        for item in items:
            if _half_slow(item) and _half(item) not in (half, None):
                item.add_marker(skip)


def pytest_report_header(config: pytest.Config) -> str | None:
    files = os.environ.get("CHRONICA_FILES")
    if files in HALVES:
        return (
            f"CHRONICA_FILES={files}: the test files of the {files} only; the others are"
            " deselected here and run in this pair's other leg, on the other database"
            " (scripts/ci.py)"
        )
    return None


HALVES = ("first-half", "second-half")
"""The test files under tests/, sorted, taken in turn: each file is in one half.
``CHRONICA_FILES=first-half`` runs the files of that half only (the newest pair's suite
legs, one half on each database); ``CHRONICA_SLOW=first-half`` runs the slow tests of
that half's files only (the venv's pair's legs, the other half's run in the newest pair's
leg of the same database). By file, so that a module's fixtures serve its tests in one
leg. See scripts/ci.py."""

_TESTS = Path(__file__).resolve().parent
_halves: dict[Path, str] = {}


def _half(item: pytest.Item) -> str | None:
    """The half of the item's file; None for a test outside tests/ (the frameworks' own
    suites, which run once a build)."""
    if not _halves:
        found = sorted(_TESTS.rglob("test_*.py"))
        _halves.update({path: HALVES[n % 2] for n, path in enumerate(found)})
    return _halves.get(Path(str(item.path)).resolve())


def _half_slow(item: pytest.Item) -> bool:
    """Whether ``item`` is one of the slow tests split in halves: the once-per-build tests
    are not, their legs run them all."""
    return item.get_closest_marker("slow") is not None and item.get_closest_marker("once") is None


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("CHRONICA_TEST_DB") != "postgres":
        return
    url = os.environ.get("CHRONICA_TEST_PG_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    parts = urlsplit(url)
    try:
        socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 5432), 3).close()
    except OSError as exc:
        pytest.exit(
            f"PostgreSQL is not reachable at {parts.hostname}:{parts.port or 5432} ({exc}).\n"
            "Start it (pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start),"
            " point CHRONICA_TEST_PG_URL at another server, or skip the PostgreSQL run on"
            " purpose with CHRONICA_SKIP_POSTGRES=1.",
            returncode=3,
        )


@pytest.fixture(
    params=["memory", pytest.param("django", marks=pytest.mark.django_db(transaction=True))]
)
def store(request: pytest.FixtureRequest):
    """Every Chronicarius rule runs on the in-memory store and on DjangoStore."""
    if request.param == "memory":
        from chronica.stores.memory import InMemoryStore

        return InMemoryStore()
    from chronica.stores.db import DjangoStore

    return DjangoStore()


@pytest.fixture
def chronicarius(store):
    from chronica.services import Chronicarius

    return Chronicarius(store)


@pytest.fixture
def ardian(django_user_model):
    """The person of the dinner-friday session, as a Django user."""
    return django_user_model.objects.create_user("ardian", password="ardian-password")


@pytest.fixture
def rafa(django_user_model):
    """Someone else, who must never see ardian's sessions."""
    return django_user_model.objects.create_user("rafa", password="rafa-password")


@pytest.fixture
def held_write_lock():
    """Another process's long transaction: it holds SQLite's write lock for 7 seconds,
    longer than the 5-second busy timeout of Django's default options."""
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's write lock: this run is on PostgreSQL")
    path = connection.settings_dict["NAME"]
    holding, done = threading.Event(), threading.Event()

    def hold():
        other = sqlite3.connect(path, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            holding.set()
            time.sleep(7)
            other.execute("COMMIT")
        finally:
            other.close()
            done.set()

    thread = threading.Thread(target=hold)
    thread.start()
    assert holding.wait(10)
    yield done
    thread.join()


# -- where a leg's processor time goes ---------------------------------------------------
# CHRONICA_CPU_REPORT=N: the N tests that took the most processor time, theirs and their
# child processes' (servers, commands, workers they started and waited for). Wall time
# (--durations) hides it: most of a leg's processor goes to the Pythons it starts.

_cpu: dict[str, float] = {}


def _processor_seconds() -> float:
    import resource

    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    if not os.environ.get("CHRONICA_CPU_REPORT"):
        return (yield)
    began = _processor_seconds()
    try:
        return (yield)
    finally:
        _cpu[item.nodeid] = _processor_seconds() - began


def pytest_terminal_summary(terminalreporter: Any) -> None:
    count = int(os.environ.get("CHRONICA_CPU_REPORT") or 0)
    if not count or not _cpu:
        return
    terminalreporter.section(f"processor time: {sum(_cpu.values()):.0f} s in all, the top {count}")
    by_file: dict[str, float] = {}
    for nodeid, seconds in _cpu.items():
        by_file[nodeid.split("::")[0]] = by_file.get(nodeid.split("::")[0], 0.0) + seconds
    for nodeid, seconds in sorted(_cpu.items(), key=lambda kv: -kv[1])[:count]:
        terminalreporter.write_line(f"{seconds:7.1f}s  {nodeid}")
    terminalreporter.write_line("by file:")
    for path, seconds in sorted(by_file.items(), key=lambda kv: -kv[1])[:count]:
        terminalreporter.write_line(f"{seconds:7.1f}s  {path}")
