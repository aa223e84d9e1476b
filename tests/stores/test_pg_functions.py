"""PostgreSQL: the writes without a key call the PL/pgSQL functions of migration 0004,
and a window checks its owner with one (their plans are kept for the session; a
statement sent with Django's client-side binding is planned anew each time)."""

from __future__ import annotations

import contextlib
import hashlib
import importlib

import pytest
from django.db import connection

from chronica import ChronicumNotFound, models, services
from chronica.stores import db, listener
from chronica.stores.db import functions_0004, functions_0007, functions_0008, postgresql
from chronica.stores.db.base import run_plan
from chronica.stores.db.state import _read_plan
from chronica.values import ActaQuery, ActorKind, Actum

from .. import scenario

OWNER = "ardian"
functions = importlib.import_module("chronica.migrations.0004_postgresql_functions")
migration_0007 = importlib.import_module("chronica.migrations.0007_read_state_function")
migration_0008 = importlib.import_module("chronica.migrations.0008_window_function")
READ_STATE_RESULT = (
    "TABLE(r_started_at bigint, r_last_activity_at bigint, r_namespace character varying,"
    " r_state jsonb, r_mine jsonb, r_shared jsonb, r_id character varying, r_kind character"
    " varying, r_actor_kind character varying, r_actor character varying, r_content text,"
    " r_at bigint, r_call_id character varying, r_data jsonb, r_recorded_by character varying)"
)
WINDOW_RESULT = (
    "TABLE(r_id character varying, r_kind character varying, r_actor_kind character varying,"
    " r_actor character varying, r_content text, r_at text, r_call_id character varying,"
    " r_data jsonb, r_recorded_by character varying)"
)


def test_the_migration_names_what_the_store_names():
    assert functions_0004.FOLLOWED == listener.FOLLOWED
    assert models.Actum._meta.db_table == functions_0004.ACTA
    assert models.Chronicum._meta.db_table == functions_0004.CHRONICA
    assert (functions.RECORD_ACTUM, functions.RECORD_ACTA, functions.OWNS, functions.DROP) == (
        functions_0004.RECORD_ACTUM,
        functions_0004.RECORD_ACTA,
        functions_0004.OWNS,
        functions_0004.DROP,
    )


def test_the_functions_of_migration_0004_are_frozen():
    """Every database that ran migration 0004 has these functions, byte for byte: a
    change is a new migration with texts of its own, never an edit of these."""
    digests = {
        name: hashlib.sha256(getattr(functions_0004, name).encode()).hexdigest()[:16]
        for name in ("RECORD_ACTUM", "RECORD_ACTA", "OWNS", "DROP")
    }
    assert digests == {
        "RECORD_ACTUM": "0b1b56bdca70a04e",
        "RECORD_ACTA": "616ec8710592fd7c",
        "OWNS": "cae01dfc028f9901",
        "DROP": "cf25a69af587a069",
    }


def test_the_function_of_migration_0007_is_frozen():
    assert (migration_0007.READ_STATE, migration_0007.DROP) == (
        functions_0007.READ_STATE,
        functions_0007.DROP,
    )
    assert models.Actum._meta.db_table == functions_0007.ACTA
    assert models.Chronicum._meta.db_table == functions_0007.CHRONICA
    assert models.SharedState._meta.db_table == functions_0007.STATES
    digests = {
        name: hashlib.sha256(getattr(functions_0007, name).encode()).hexdigest()[:16]
        for name in ("READ_STATE", "DROP")
    }
    assert digests == {"READ_STATE": "9c9102239f517acd", "DROP": "a31b974be26d6ae4"}


def test_the_function_of_migration_0008_is_frozen():
    assert (migration_0008.WINDOW, migration_0008.DROP) == (
        functions_0008.WINDOW,
        functions_0008.DROP,
    )
    assert models.Actum._meta.db_table == functions_0008.ACTA
    assert models.Chronicum._meta.db_table == functions_0008.CHRONICA
    digests = {
        name: hashlib.sha256(getattr(functions_0008, name).encode()).hexdigest()[:16]
        for name in ("WINDOW", "DROP")
    }
    assert digests == {"WINDOW": "b3caf6262a281fe0", "DROP": "69ab58eadff8a22b"}


def statements(call) -> list[str]:
    """The statements ``call`` sends, as given to the cursor (Django's captured queries
    have no text when the parameters are bound on the server)."""
    seen: list[str] = []

    def wrapper(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(wrapper):
        call()
    return [sql for sql in seen if "SAVEPOINT" not in sql.upper()]


@contextlib.contextmanager
def connection_options(options: dict):
    """The default connection's OPTIONS are ``options`` for the block."""
    current = connection.settings_dict["OPTIONS"]
    saved = dict(current)
    current.clear()
    current.update(options)
    try:
        yield
    finally:
        current.clear()
        current.update(saved)


@pytest.fixture
def postgres(db):
    if connection.vendor != "postgresql":
        pytest.skip("PL/pgSQL functions are PostgreSQL's; elsewhere a write is plain statements")


def test_migrate_created_the_functions(postgres):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT proname, pg_get_function_result(oid), provolatile FROM pg_proc"
            " WHERE proname LIKE 'chronica%%' ORDER BY 1"
        )
        assert cursor.fetchall() == [
            ("chronica_owns", "boolean", "s"),  # STABLE: the window's own snapshot
            # migration 0007: the state and the newest acta, in the caller's snapshot
            ("chronica_read_state", READ_STATE_RESULT, "s"),
            ("chronica_record_acta", "bigint", "v"),
            ("chronica_record_acta_by", "bigint", "v"),  # migration 0006: recorded_by
            ("chronica_record_actum", "bigint", "v"),
            ("chronica_record_actum_by", "bigint", "v"),
            # migration 0008: the plain window, in the caller's snapshot
            ("chronica_window", WINDOW_RESULT, "s"),
        ]


def test_a_window_checks_its_owner_with_the_function(postgres):
    stored = services.record_acta(OWNER, scenario.acta())
    chronicum_id = stored[0].chronicum_id
    # Before an actum: the statement, checking its owner with chronica_owns (a plain
    # window calls migration 0008's chronica_window, which checks it itself).
    one = statements(lambda: services.get_acta(OWNER, chronicum_id, before=stored[-1].id))
    assert len(one) == 1, one
    assert "chronica_owns(" in one[0]
    assert "EXISTS" not in one[0]
    assert services.get_acta(OWNER, chronicum_id, before=stored[-1].id) == stored[:-1]
    budget = statements(lambda: services.get_acta(OWNER, chronicum_id, max_tokens=50))
    assert len(budget) == 1, budget
    assert "chronica_owns(" in budget[0], budget
    store = db.DjangoStore()
    # rafa reads nothing of ardian's, through the function as through the subquery
    assert store.acta_if_owner("rafa", chronicum_id, ActaQuery()) is None
    assert store.acta_if_owner("rafa", chronicum_id, ActaQuery(max_tokens=10**6)) is None
    with pytest.raises(ChronicumNotFound):
        services.get_acta("rafa", chronicum_id)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT chronica_owns(%s, %s), chronica_owns(%s, %s)",
            [chronicum_id, OWNER, chronicum_id, "rafa"],
        )
        assert cursor.fetchone() == (True, False)


def test_a_write_into_a_missing_chronicum_writes_nothing(postgres):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT chronica_record_actum(%s, NULL, 'x', 'message', 'human', 'a', 'c', '',"
            " NULL, 1), chronica_record_acta(%s, NULL, '[]')",
            ["never-created", "never-created"],
        )
        assert cursor.fetchone() == (None, None)
        cursor.execute("SELECT count(*) FROM acta WHERE chronicum_id = 'never-created'")
        assert cursor.fetchone() == (0,)


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


def test_an_attested_write_is_one_call_of_migration_0006s_function(postgres):
    from chronica.services import AgentIdentity

    first, *_ = scenario.acta()
    services.record_actum(OWNER, first)
    booking = services.acting_as(AgentIdentity(owner_id=OWNER, actor="booking", key_id="k0"))
    reply = scenario.booking_reply()
    one = statements(lambda: booking.record_actum(OWNER, reply))
    assert len(one) == 1, one
    assert "chronica_record_actum_by(" in one[0]
    batch = statements(lambda: booking.record_acta(OWNER, [reply, reply]))
    assert len(batch) == 1, batch
    assert "chronica_record_acta_by(" in batch[0]
    acta = services.get_acta(OWNER, first.chronicum_id)
    assert [a.recorded_by for a in acta] == [
        None,
        "credential:k0",
        "credential:k0",
        "credential:k0",
    ]


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
            db.forget_functions()
            lookup_and_write = statements(lambda: services.record_actum(OWNER, second))
            assert len(lookup_and_write) == 2, lookup_and_write
            assert "to_regproc" in lookup_and_write[0]
            assert "INSERT INTO acta" in lookup_and_write[1]
            batch = statements(lambda: services.record_acta(OWNER, rest[:2]))
            assert len(batch) == 1, batch
            assert "INSERT INTO acta" in batch[0]
            assert db.DjangoStore().record_batch_if_owner("rafa", rest[2:3], None, [None]) is None
            window = statements(lambda: services.get_acta(OWNER, first.chronicum_id))
            assert len(window) == 1, window
            assert "EXISTS (SELECT 1 FROM chronica" in window[0], window
            assert "chronica_window(" not in window[0], window
            acta = services.get_acta(OWNER, first.chronicum_id)
            assert [a.content for a in acta] == [a.content for a in [first, second, *rest[:2]]]
            with pytest.raises(ChronicumNotFound):
                services.get_acta("rafa", first.chronicum_id)
            transaction.set_rollback(True)  # the functions come back with the rollback
    finally:
        db.forget_functions()
    one = statements(lambda: services.record_actum(OWNER, second))
    assert "to_regproc" in one[0]
    assert "chronica_record_actum(" in one[1]


def test_migrate_makes_the_store_look_again(postgres):
    postgresql._FUNCTIONS[("default", "x")] = False
    from django.core.management import call_command

    call_command("migrate", "chronica", verbosity=0)
    assert postgresql._FUNCTIONS == {}


@pytest.fixture
def preparing(postgres):
    """The default connection with prepared statements on (server-side binding, psycopg
    prepares a statement on its second run), as a project turns them on in OPTIONS."""
    options = {
        **connection.settings_dict["OPTIONS"],
        "server_side_binding": True,
        "prepare_threshold": 1,
    }
    with connection_options(options):
        connection.close()
        try:
            yield
        finally:
            connection.close()


@pytest.mark.django_db(transaction=True)
def test_with_prepared_statements_a_write_is_the_prepared_statement(preparing):
    """A prepared statement is planned once a connection and runs faster than the
    function: a write sends it instead; a plain window still calls migration 0008's."""
    assert db.DjangoStore()._database().prepares
    db.forget_functions()
    first, *rest = scenario.acta()
    stored = [services.record_actum(OWNER, first)]
    for actum in rest[:3]:
        one = statements(lambda a=actum: stored.append(services.record_actum(OWNER, a)))
        assert len(one) == 1, one
        assert "INSERT INTO acta" in one[0], one
    batch = statements(lambda: stored.extend(services.record_acta(OWNER, rest[3:])))
    assert len(batch) == 1, batch
    assert "INSERT INTO acta" in batch[0], batch
    assert connection.connection.prepare_threshold == 1
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements")
        assert cursor.fetchone()[0] >= 1  # psycopg did prepare
    # The writes did not need to know whether the functions are there; the first window does.
    looked_up, window = (
        statements(lambda: services.get_acta(OWNER, first.chronicum_id, last_n=3)) for _ in range(2)
    )
    assert "to_regproc" in looked_up[0], looked_up
    assert len(looked_up) == 2, looked_up
    assert len(window) == 1, window
    assert "chronica_window(" in window[0], window  # prepared too: migration 0008's call
    assert services.get_acta(OWNER, first.chronicum_id) == stored
    assert db.DjangoStore().record_batch_if_owner("rafa", rest[:1], None, [None]) is None
    assert db.DjangoStore().record_batch_if_owner("rafa", rest[:2], None, [None] * 2) is None
    assert services.get_acta(OWNER, first.chronicum_id) == stored


def test_the_store_knows_when_its_connections_prepare(postgres):
    for given, prepares in [
        ({}, False),
        ({"server_side_binding": True}, False),  # Django's prepare_threshold: None
        ({"prepare_threshold": 5}, False),  # client-side binding prepares nothing
        ({"server_side_binding": True, "prepare_threshold": 5}, True),
    ]:
        with connection_options(given):
            assert db.DjangoStore()._database().prepares is prepares, given


def read_state(owner: str, chronicum_id: str, query: ActaQuery | None):
    """The asyncio path's session read (``aread_state``'s plan), on Django's cursor."""
    store = db.DjangoStore()
    plan = _read_plan(connection, owner, "ns", chronicum_id, query, store._database(connection))
    with connection.cursor() as cursor:
        return run_plan(cursor, plan)


def test_a_session_read_is_one_call_of_migration_0007s_function(postgres):
    """The state and the newest acta in one call of ``chronica_read_state``, whose plans
    PostgreSQL keeps for the session; the same view as the one statement it replaces,
    which a read still sends where the function is missing (or with filters)."""
    from django.db import transaction

    stored = services.record_acta(OWNER, scenario.acta())
    chronicum_id = stored[0].chronicum_id
    db.forget_functions()
    read_state(OWNER, chronicum_id, ActaQuery(last_n=3))  # the functions looked up
    cases = [
        (OWNER, ActaQuery(last_n=3)),
        (OWNER, ActaQuery()),  # every actum (no limit: NULL)
        (OWNER, ActaQuery(last_n=2**63)),  # no limit either
        ("rafa", ActaQuery(last_n=3)),  # another owner's chronicum: nothing of it
    ]
    by_function = []
    for owner, query in cases:
        sent = statements(
            lambda o=owner, q=query: by_function.append(read_state(o, chronicum_id, q))
        )
        assert len(sent) == 1, sent
        assert "chronica_read_state(" in sent[0], sent
    assert by_function[0].acta == stored[-3:]
    assert by_function[1].acta == by_function[2].acta == stored
    assert by_function[0].chronicum is not None
    assert by_function[3].chronicum is None
    assert by_function[3].acta is None
    filtered = statements(
        lambda: read_state(OWNER, chronicum_id, ActaQuery(kinds=frozenset([scenario.M])))
    )
    assert len(filtered) == 1, filtered
    assert "chronica_read_state(" not in filtered[0], filtered
    try:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(migration_0007.DROP)
            db.forget_functions()
            by_statement = [read_state(owner, chronicum_id, query) for owner, query in cases]
            transaction.set_rollback(True)  # the function comes back with the rollback
    finally:
        db.forget_functions()
    assert by_statement == by_function


def _window_cases(stored):
    """(owner, query) pairs a plain window takes: filters of every kind, limits, another
    owner, actor IDs an array's text must quote."""
    M, T = scenario.M, scenario.T
    actors = sorted({a.actor for a in stored})
    return [
        (OWNER, ActaQuery(last_n=3)),
        (OWNER, ActaQuery()),
        (OWNER, ActaQuery(last_n=2**63)),
        (OWNER, ActaQuery(last_n=2)),
        (OWNER, ActaQuery(kinds=frozenset([M]))),
        (OWNER, ActaQuery(kinds=frozenset([M, T]), last_n=4)),
        (OWNER, ActaQuery(actor_kinds=frozenset(a.actor_kind for a in stored[:1]))),
        (OWNER, ActaQuery(actors=frozenset(actors[:1]))),
        (OWNER, ActaQuery(actors=frozenset(actors), kinds=frozenset([M]), last_n=5)),
        (OWNER, ActaQuery(actors=frozenset(['a"b', "c\\\\d", "{e,f}", "NULL", " g "]))),
        ("rafa", ActaQuery(last_n=3)),  # another owner's chronicum: nothing of it
    ]


def test_a_plain_window_is_one_call_of_migration_0008s_function(postgres):
    """A window with filters and a limit (no budget, no ``before``) is one call of
    ``chronica_window``, whose plans PostgreSQL keeps for the session; it answers what
    the statement answers, which a window still sends where the function is missing."""
    from django.db import transaction

    hostile = ['a"b', "c\\\\d", "{e,f}", "NULL", " g "]
    stored = services.record_acta(OWNER, scenario.acta())
    chronicum_id = stored[0].chronicum_id
    for actor in hostile:  # actor IDs that an array's text must quote and escape
        actum = Actum(
            chronicum_id=chronicum_id,
            kind=scenario.M,
            actor_kind=ActorKind.AGENT,
            actor=actor,
            content=f"from {actor}",
        )
        stored.append(services.record_actum(OWNER, actum))
    store = db.DjangoStore()
    db.forget_functions()
    store.acta_if_owner(OWNER, chronicum_id, ActaQuery(last_n=1))  # the functions looked up
    cases = _window_cases(stored)
    by_function = []
    for owner, query in cases:
        sent = statements(
            lambda o=owner, q=query: by_function.append(store.acta_if_owner(o, chronicum_id, q))
        )
        assert len(sent) == 1 or (owner != OWNER and len(sent) == 2), sent
        assert "chronica_window(" in sent[0], sent
    assert by_function[0] == stored[-3:]
    assert by_function[1] == by_function[2] == stored
    assert [a.actor for a in by_function[9]] == hostile
    assert by_function[-1] is None
    assert store.acta_if_owner(OWNER, "no-such-chronicum", ActaQuery()) is None
    with pytest.raises(ChronicumNotFound):
        services.get_acta(OWNER, "no-such-chronicum", last_n=3)
    services.create_chronicum(OWNER, "empty")
    assert services.get_acta(OWNER, "empty", last_n=3) == []
    for other in (ActaQuery(max_tokens=100), ActaQuery(before=stored[-1].id)):
        sent = statements(lambda q=other: store.acta_if_owner(OWNER, chronicum_id, q))
        assert "chronica_window(" not in sent[0], sent
    try:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(migration_0008.DROP)
            db.forget_functions()
            by_statement = [store.acta_if_owner(o, chronicum_id, q) for o, q in cases]
            sent = statements(lambda: store.acta_if_owner(OWNER, chronicum_id, cases[0][1]))
            assert "chronica_window(" not in sent[0], sent
            transaction.set_rollback(True)  # the function comes back with the rollback
    finally:
        db.forget_functions()
    assert by_statement == by_function


def test_the_array_text_of_the_window_function():
    assert postgresql.array_literal([]) == "{}"
    assert postgresql.array_literal(["b", "a"]) == '{"a","b"}'
    assert postgresql.array_literal([scenario.M]) == '{"message"}'
    assert postgresql.array_literal(['a"b', "c\\d", "{x,y}"]) == r'{"a\"b","c\\d","{x,y}"}'


def test_the_array_text_reads_back_as_the_strings(postgres):
    values = ['a"b', "c\\d", "{x,y}", "NULL", " s ", "é✓", "", "'"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::text[]", [postgresql.array_literal(values)])
        assert sorted(cursor.fetchone()[0]) == sorted(values)
