"""PostgreSQL: the writes without a key call the PL/pgSQL functions of migration 0004
(their plans are kept for the session; a statement sent with Django's client-side
binding is planned anew each time)."""

from __future__ import annotations

import importlib

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from chronica import models, services
from chronica.stores import db

from . import scenario

OWNER = "ardian"
functions = importlib.import_module("chronica.migrations.0004_postgresql_write_functions")


def test_the_migration_names_what_the_store_names():
    assert functions._FOLLOWED == db._FOLLOWED
    assert models.Actum._meta.db_table == functions._ACTA
    assert models.Chronicum._meta.db_table == functions._CHRONICA


def statements(call) -> list[str]:
    with CaptureQueriesContext(connection) as ctx:
        call()
    return [q["sql"] for q in ctx.captured_queries if "SAVEPOINT" not in q["sql"].upper()]


@pytest.fixture
def postgres(db):
    if connection.vendor != "postgresql":
        pytest.skip("PL/pgSQL functions are PostgreSQL's; elsewhere a write is plain statements")


def test_migrate_created_both_functions(postgres):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT proname FROM pg_proc WHERE proname LIKE 'chronica_record_act%%' ORDER BY 1"
        )
        assert [row[0] for row in cursor.fetchall()] == [
            "chronica_record_acta",
            "chronica_record_actum",
        ]


def test_a_write_is_one_call_of_a_function(postgres):
    first, *rest = scenario.acta()
    services.record_actum(OWNER, first)
    one = statements(lambda: services.record_actum(OWNER, rest[0]))
    assert len(one) == 1, one
    assert "chronica_record_actum(" in one[0]
    batch = statements(lambda: services.record_acta(OWNER, rest[1:]))
    assert len(batch) == 1, batch
    assert "chronica_record_acta(" in batch[0]
    keyed = statements(
        lambda: services.record_actum(OWNER, scenario.booking_reply(), idempotency_key="k")
    )
    assert len(keyed) == 1, keyed
    assert "INSERT INTO acta" in keyed[0]
    contents = [a.content for a in services.get_acta(OWNER, first.chronicum_id)]
    assert contents == [a.content for a in [first, *rest, scenario.booking_reply()]]


def test_another_owners_chronicum_is_not_written_by_the_function(postgres):
    services.record_actum(OWNER, scenario.acta()[0])
    store = db.DjangoStore()
    assert store.record_batch_if_owner("rafa", scenario.acta()[1:2], None, [None]) is None
    assert store.record_batch_if_owner("rafa", scenario.acta()[1:3], None, [None, None]) is None
    assert len(services.get_acta(OWNER, scenario.acta()[0].chronicum_id)) == 1


def test_without_the_migration_the_write_fails_loudly(postgres):
    """Errors from the database pass through: functions dropped after the store found
    them give PostgreSQL's own error (a migration makes it look again)."""
    from django.db import ProgrammingError, transaction

    services.record_actum(OWNER, scenario.acta()[0])
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(functions.DROP)
        with (
            pytest.raises(ProgrammingError, match="chronica_record_actum"),
            transaction.atomic(),
        ):
            services.record_actum(OWNER, scenario.acta()[1])
        transaction.set_rollback(True)  # the functions come back with the rollback
    assert len(services.get_acta(OWNER, scenario.acta()[0].chronicum_id)) == 1


def test_without_the_functions_a_write_is_one_plain_statement(postgres):
    """Tables made without migrations (pytest-django's --no-migrations) have no
    functions: the write looks that up once and sends the same write as a statement."""
    from django.db import transaction

    first, second, *rest = scenario.acta()
    services.record_actum(OWNER, first)
    try:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(functions.DROP)
            db.forget_write_functions()
            lookup_and_write = statements(lambda: services.record_actum(OWNER, second))
            assert len(lookup_and_write) == 2, lookup_and_write
            assert "to_regproc" in lookup_and_write[0]
            assert "INSERT INTO acta" in lookup_and_write[1]
            batch = statements(lambda: services.record_acta(OWNER, rest[:2]))
            assert len(batch) == 1, batch
            assert "INSERT INTO acta" in batch[0]
            assert db.DjangoStore().record_batch_if_owner("rafa", rest[2:3], None, [None]) is None
            acta = services.get_acta(OWNER, first.chronicum_id)
            assert [a.content for a in acta] == [a.content for a in [first, second, *rest[:2]]]
            transaction.set_rollback(True)  # the functions come back with the rollback
    finally:
        db.forget_write_functions()
    one = statements(lambda: services.record_actum(OWNER, second))
    assert "to_regproc" in one[0]
    assert "chronica_record_actum(" in one[1]


def test_migrate_makes_the_store_look_again(postgres):
    db._WRITE_FUNCTIONS[("default", "x")] = False
    from django.core.management import call_command

    call_command("migrate", "chronica", verbosity=0)
    assert db._WRITE_FUNCTIONS == {}
