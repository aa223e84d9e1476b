"""PostgreSQL: what the store's statements are there. Migration 0010 leaves no
function of chronica's (every read and write is a plain statement), and the store
works as well with the prepared statements a project may turn on (server-side binding)."""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib

import pytest
from django.db import connection

from chronica import services
from chronica.stores.db import DjangoStore

from .. import scenario

OWNER = "ardian"

FUNCTIONS = (
    "chronica_record_actum",
    "chronica_record_acta",
    "chronica_owns",
    "chronica_record_actum_by",
    "chronica_record_acta_by",
    "chronica_read_state",
    "chronica_window",
)


@pytest.fixture
def postgres(db):
    if connection.vendor != "postgresql":
        pytest.skip("functions and prepared statements are PostgreSQL's: this run is on SQLite")


def functions() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT proname FROM pg_proc WHERE proname LIKE 'chronica%%'")
        return {row[0] for row in cursor.fetchall()}


def test_a_migrated_database_has_no_function_of_chronicas(postgres):
    assert functions() == set()


def test_migration_0010_drops_the_functions_an_older_database_has(postgres):
    stubs = [
        "CREATE FUNCTION chronica_record_actum(varchar, varchar, varchar, varchar, varchar,"
        " varchar, text, varchar, text, bigint) RETURNS bigint LANGUAGE sql AS 'SELECT 1::bigint'",
        "CREATE FUNCTION chronica_record_acta(varchar, varchar, json) RETURNS bigint"
        " LANGUAGE sql AS 'SELECT 1::bigint'",
        "CREATE FUNCTION chronica_owns(varchar, varchar) RETURNS boolean"
        " LANGUAGE sql AS 'SELECT true'",
        "CREATE FUNCTION chronica_record_actum_by(varchar, varchar, varchar, varchar, varchar,"
        " varchar, text, varchar, text, bigint, varchar) RETURNS bigint"
        " LANGUAGE sql AS 'SELECT 1::bigint'",
        "CREATE FUNCTION chronica_record_acta_by(varchar, varchar, json) RETURNS bigint"
        " LANGUAGE sql AS 'SELECT 1::bigint'",
        "CREATE FUNCTION chronica_read_state(varchar, varchar, varchar, bigint) RETURNS int"
        " LANGUAGE sql AS 'SELECT 1'",
        "CREATE FUNCTION chronica_window(varchar, varchar, text[], text[], text[], bigint)"
        " RETURNS int LANGUAGE sql AS 'SELECT 1'",
    ]
    with connection.cursor() as cursor:
        for stub in stubs:
            cursor.execute(stub)
    assert functions() == set(FUNCTIONS)
    migration = importlib.import_module("chronica.migrations.0010_drop_functions")
    with connection.cursor() as cursor:
        cursor.execute(migration.DROP)
    assert functions() == set()


@contextlib.contextmanager
def connection_options(options: dict):
    """The default connection's OPTIONS are ``options`` for the block."""
    current = connection.settings_dict["OPTIONS"]
    saved = dict(current)
    current.clear()
    current.update(options)
    connection.close()
    try:
        yield
    finally:
        connection.close()
        current.clear()
        current.update(saved)


@pytest.mark.django_db(transaction=True)
def test_with_prepared_statements_everything_works_and_is_prepared(postgres):
    """Server-side binding with psycopg preparing a statement on its second run, as a
    project turns them on in OPTIONS: writes, replays, windows, pages, pops and follows
    answer as with Django's defaults, and psycopg did prepare them."""
    options = {**connection.settings_dict["OPTIONS"], "server_side_binding": True}
    with connection_options({**options, "prepare_threshold": 1}):
        store = DjangoStore()
        first, *rest = scenario.acta()
        stored = [services.record_actum(OWNER, first)]
        stored += [services.record_actum(OWNER, actum) for actum in rest[:3]]
        stored += services.record_acta(OWNER, rest[3:])
        reply = scenario.booking_reply()
        keyed = services.record_actum(OWNER, reply, idempotency_key="booking-reply-1")
        assert services.record_actum(OWNER, reply, idempotency_key="booking-reply-1") == keyed
        stored.append(keyed)
        for _ in range(3):
            assert services.get_acta(OWNER, first.chronicum_id) == stored
            assert services.get_acta(OWNER, first.chronicum_id, last_n=3) == stored[-3:]
            page = services.get_acta_page(OWNER, first.chronicum_id, last_n=2, max_bytes=10**6)
            assert page.acta == stored[-2:]
            assert services.get_acta(OWNER, first.chronicum_id, max_tokens=10**6) == stored
        assert (
            store.acta_after(OWNER, first.chronicum_id, scenario_query(), stored[-3].id, 10)[0]
            == stored[-2:]
        )
        assert store.append("rafa", first.chronicum_id, rest[:1]) is None
        assert services.pop_actum(OWNER, first.chronicum_id) == keyed
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_prepared_statements")
            assert cursor.fetchone()[0] >= 1  # psycopg did prepare


def scenario_query():
    from chronica import ActaQuery

    return ActaQuery()


def test_times_read_back_are_the_stored_moments_whatever_the_sessions_time_zone(postgres):
    """A session whose time zone is not UTC any more (Django sets it when it connects;
    a project's own ``SET TIME ZONE`` on the connection changes it) hands times back
    with its offset: chronica's reads take them as the moments they are. (Django's own
    loader, which the ORM keeps, would stamp them UTC as they are written, seven hours
    off.)"""
    first, *rest = scenario.acta()
    stored = [services.record_actum(OWNER, first), *services.record_acta(OWNER, rest)]
    chronicum = services.get_chronicum(OWNER, first.chronicum_id)
    with connection.cursor() as cursor:
        cursor.execute("SET TIME ZONE 'Asia/Jakarta'")
    try:
        assert services.get_acta(OWNER, first.chronicum_id) == stored
        assert services.get_chronicum(OWNER, first.chronicum_id) == chronicum
        view = services.get_state(OWNER, "ns", first.chronicum_id, acta=True, last_n=3)
        assert (view.chronicum, view.acta) == (chronicum, stored[-3:])
        assert services.list_chronica(OWNER) == [chronicum]
        assert services.get_acta_page(OWNER, first.chronicum_id, last_n=2).acta == stored[-2:]
        fork = services.fork_chronicum(OWNER, first.chronicum_id, new_id="dinner-fork")
        assert fork.started_at > chronicum.started_at
        assert fork.started_at - chronicum.started_at < dt.timedelta(minutes=5)
        fork_ids = [a.id for a in services.get_acta(OWNER, fork.id)]
        assert [a.at for a in services.get_acta(OWNER, fork.id)] == [a.at for a in stored]
        redacted = services.redact_actum(OWNER, first.chronicum_id, stored[0].id, reason="test")
        assert (redacted.at, redacted.id) == (stored[0].at, stored[0].id)
        assert redacted.redacted.at - stored[-1].at < dt.timedelta(minutes=5)
        assert redacted.redacted.at >= stored[-1].at
        since = stored[0].at - dt.timedelta(seconds=1)
        assert DjangoStore().redactions(OWNER, first.chronicum_id, since, 2**62) == [redacted]
        summary = scenario.booking_reply("Ardian booked Rumah Teduh.", chronicum_id="dinner-fork")
        compacted = services.compact(OWNER, "dinner-fork", [summary], through=fork_ids[-1])
        assert abs(compacted[0].at - dt.datetime.now(dt.UTC)) < dt.timedelta(minutes=5)
        assert services.get_acta(OWNER, "dinner-fork", compacted=False)[-1] == compacted[0]
        assert services.pop_actum(OWNER, first.chronicum_id) == stored[-1]
        again = services.record_actum(OWNER, scenario.booking_reply())
        assert abs(again.at - dt.datetime.now(dt.UTC)) < dt.timedelta(minutes=5)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET TIME ZONE 'UTC'")


def test_a_read_of_chronicas_leaves_the_connections_time_loader_to_the_orm(postgres):
    """chronica reads times with psycopg's own loader on its cursors only: the ORM's
    (Django's, which makes times aware in its own way) stays the connection's."""
    from psycopg.pq import Format

    from chronica.models import Chronicum

    services.record_actum(OWNER, scenario.acta()[0])
    oid = connection.connection.adapters.types["timestamptz"].oid
    before = connection.connection.adapters.get_loader(oid, Format.TEXT)
    services.get_acta(OWNER, scenario.CHRONICUM)
    assert connection.connection.adapters.get_loader(oid, Format.TEXT) is before
    assert hasattr(before, "timezone")  # Django's
    assert Chronicum.objects.get(id=scenario.CHRONICUM).started_at.tzinfo is dt.UTC
