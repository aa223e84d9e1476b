from __future__ import annotations

import os
import socket
import sqlite3
import threading
import time
from urllib.parse import urlsplit

import pytest
from django.db import connection
from hypothesis import settings

# Every property test draws the same examples on every run: a build must not pass or
# fail by the draw. CHRONICA_HYPOTHESIS=random draws new ones, to search by hand.
settings.register_profile("derandomized", derandomize=True)
settings.register_profile("random", derandomize=False)
settings.load_profile(
    "random" if os.environ.get("CHRONICA_HYPOTHESIS") == "random" else "derandomized"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``make test`` runs the once-per-build checks in the newest pair's legs only
    (scripts/ci.py): the other legs skip them, saying where they run."""
    if os.environ.get("CHRONICA_ONCE") != "elsewhere":
        return
    elsewhere = pytest.mark.skip(
        reason="once per build: make test runs it in the newest pair's legs (scripts/ci.py)"
    )
    for item in items:
        if item.get_closest_marker("once") is not None:
            item.add_marker(elsewhere)


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
