"""How the API tells a database it could not reach from one that failed mid-request:
by what the driver raised (``chronica.api.errors.failed_to_connect``), never by where.

A connection that was never opened sent nothing, so even a write without a key may be
sent again (503); an error on an open connection may have had effects (a write
without a key: 500 that says so)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.db import OperationalError, connection, connections
from django.db.utils import load_backend
from django.test import override_settings

import chronica
from chronica.api.errors import failed_to_connect

from ..database import silent_server
from .test_api import GOOD, UNREACHABLE, as_ardian, chronicum_url, closed_port, post

__all__ = ["as_ardian"]  # fixtures

CHRONICA_SOURCES = Path(chronica.__file__).parent


def wrapper_for(alias: str, settings_dict: dict):
    """A database connection of this thread only, on ``settings_dict`` (never set up as a
    test database)."""
    configured = {**connections.settings, alias: settings_dict}
    settings_dict = connections.configure_settings(configured)[alias]
    return load_backend(settings_dict["ENGINE"]).DatabaseWrapper(settings_dict, alias)


@pytest.fixture(autouse=True)
def _connections_of_its_own(django_db_blocker):
    # These connections are the tests' own, never the test database.
    with django_db_blocker.unblock():
        yield


def connect_error(settings_dict: dict) -> OperationalError:
    wrapper = wrapper_for("never", settings_dict)
    try:
        with pytest.raises(OperationalError) as failed:
            wrapper.ensure_connection()
    finally:
        wrapper.close()
        if hasattr(wrapper, "close_pool"):
            wrapper.close_pool()  # Django's pool, with its threads
    return failed.value


def test_no_frame_is_inspected():
    """The API's errors are told apart by their types, not by walking tracebacks."""
    found = [
        f"{path.relative_to(CHRONICA_SOURCES)}:{number}"
        for path in CHRONICA_SOURCES.rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\bf_locals\b|\btb_frame\b|\bf_back\b", line)
    ]
    assert found == []


@pytest.mark.parametrize("vendor", sorted(UNREACHABLE))
def test_a_database_that_refuses_is_known_by_the_drivers_error(vendor):
    error = connect_error(UNREACHABLE[vendor])
    # Nothing of where it was raised is needed.
    error = error.with_traceback(None)
    error.__cause__ = error.__cause__.with_traceback(None)
    assert failed_to_connect(error)


def test_a_connect_timeout_is_known():
    with silent_server() as port:
        silent = {**UNREACHABLE["postgresql"], "PORT": port, "OPTIONS": {"connect_timeout": 1}}
        error = connect_error(silent)
    assert failed_to_connect(error)
    assert "timeout" in str(error)


def test_a_pool_that_gives_no_connection_is_known():
    """Django's connection pool (psycopg_pool) on a database it cannot reach: PoolTimeout,
    and nothing was sent."""
    pooled = {
        **UNREACHABLE["postgresql"],
        "PORT": closed_port(),
        "OPTIONS": {"pool": {"min_size": 0, "max_size": 1, "timeout": 1}},
    }
    error = connect_error(pooled)
    assert type(error.__cause__).__name__ == "PoolTimeout"
    assert failed_to_connect(error)


@pytest.mark.django_db(transaction=True)
def test_an_error_on_an_open_connection_is_not():
    """A backend terminated mid-request: the statement may have had effects."""
    if connection.vendor != "postgresql":
        pytest.skip("pg_terminate_backend: this run is on SQLite")
    from ..database import server_connection

    wrapper = wrapper_for("open", connection.settings_dict)
    try:
        wrapper.ensure_connection()
        with server_connection() as admin:
            pid = wrapper.connection.info.backend_pid
            admin.execute("SELECT pg_terminate_backend(%s)", [pid])
        with pytest.raises(OperationalError) as failed, wrapper.cursor() as cursor:
            cursor.execute("SELECT 1")
    finally:
        wrapper.close()
    assert not failed_to_connect(failed.value)


def test_other_errors_are_not():
    assert not failed_to_connect(OperationalError("server closed the connection unexpectedly"))
    assert not failed_to_connect(ValueError("not a database error"))


@pytest.mark.django_db
def test_an_unkeyed_write_to_a_silent_database_is_a_503(as_ardian):
    """The database never answered the connection: nothing can have been written, so
    even a write without a key is a 503 to retry, not a 500."""
    with silent_server() as port:
        silent = {**UNREACHABLE["postgresql"], "PORT": port, "OPTIONS": {"connect_timeout": 1}}
        connections["silent"] = wrapper_for("silent", silent)
        store = {"STORE": "chronica.stores.db.DjangoStore", "STORE_OPTIONS": {"using": "silent"}}
        try:
            with override_settings(CHRONICA=store):
                answers = [post(as_ardian, GOOD), as_ardian.get(chronicum_url())]
        finally:
            connections["silent"].close()
            del connections["silent"]
    for answer in answers:
        assert answer.status_code == 503, answer.content
        assert answer["Retry-After"] == "5"
        assert answer.json() == {"detail": "The database cannot be reached; try again later."}
