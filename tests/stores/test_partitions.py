"""PostgreSQL: every statement of a store call names its chronicum by equality on
``chronicum_id`` (``id`` for ``chronica``), so that tables partitioned or distributed
by it send each statement to one partition (docs/deploying-replicas.md, "Sharding").

The tables here are test-only DDL: ``chronica`` and ``acta`` hash-partitioned 8 ways,
in a schema of their own; the connection's ``search_path`` points at it for the test,
so that chronica's statements (their table names unqualified) run on them. The writes
are the single statements whose plans EXPLAIN shows, not migration 0004's functions
(whose bodies name the chronicum the same way: ``WHERE id = p_chronicum``, and an
INSERT routes by the row; the last test runs them on these tables).
"""

from __future__ import annotations

import json

import pytest
from django.db import connection

from chronica import services
from chronica.stores.db import DjangoStore, postgresql
from chronica.stores.db.base import run_plan
from chronica.stores.db.dialects import dialect_of
from chronica.stores.db.postgresql import forget_functions
from chronica.values import ActaQuery

from .. import scenario

pytestmark = pytest.mark.django_db(transaction=True)

OWNER = "ardian"
SCHEMA = "chronica_parts"
PARTITIONS = 8

DDL = f"""
CREATE SCHEMA {SCHEMA};
SET search_path TO {SCHEMA};
CREATE TABLE chronica (LIKE public.chronica INCLUDING DEFAULTS INCLUDING INDEXES)
    PARTITION BY HASH (id);
CREATE TABLE acta (LIKE public.acta INCLUDING DEFAULTS) PARTITION BY HASH (chronicum_id);
CREATE SEQUENCE acta_seq OWNED BY acta.seq;
ALTER TABLE acta ALTER seq SET DEFAULT nextval('acta_seq');
-- Every unique constraint of a partitioned (or distributed) table includes its key.
ALTER TABLE acta ADD PRIMARY KEY (chronicum_id, seq);
CREATE INDEX acta_chronicum_id ON acta (chronicum_id, id);
CREATE UNIQUE INDEX acta_chronicum_idempotency_key ON acta (chronicum_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
""" + "".join(
    f"CREATE TABLE {table}_p{n} PARTITION OF {table}"
    f" FOR VALUES WITH (MODULUS {PARTITIONS}, REMAINDER {n})"
    " WITH (autovacuum_enabled = false);\n"
    for table in ("chronica", "acta")
    for n in range(PARTITIONS)
)


@pytest.fixture
def partitioned():
    if connection.vendor != "postgresql":
        pytest.skip("partitioned tables and EXPLAIN are PostgreSQL's: this run is on SQLite")
    forget_functions()
    with connection.cursor() as cursor:
        cursor.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        cursor.execute(DDL)
    try:
        yield
    finally:
        forget_functions()
        with connection.cursor() as cursor:
            cursor.execute("SET search_path TO DEFAULT")
            cursor.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")


class Statements:
    """The statements sent while the block runs (with their parameters)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, object]] = []

    def __call__(self, execute, sql, params, many, context):
        if not many:
            self.sent.append((sql, params))
        return execute(sql, params, many, context)


def sent_by(call):
    statements = Statements()
    with connection.execute_wrapper(statements):
        result = call()
    return result, statements.sent


def _nodes(plan):
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


def partitions_read(sql, params) -> dict[str, set[str]]:
    """By table (acta, chronica): the partitions the statement's plan touches."""
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    touched: dict[str, set[str]] = {}
    for node in _nodes(plan[0]["Plan"]):
        name = node.get("Relation Name", "")
        if node["Node Type"] in {"ModifyTable"} or node.get("Operation") == "Insert":
            continue  # an INSERT routes each row by its chronicum_id
        for table in ("acta", "chronica"):
            if name == table or name.startswith(f"{table}_p"):
                touched.setdefault(table, set()).add(name)
    return touched


def assert_one_partition_each(what, sent):
    assert sent, f"{what}: no statement sent"
    for sql, params in sent:
        if sql.lstrip().upper().startswith(("SAVEPOINT", "RELEASE", "ROLLBACK")):
            continue
        for table, names in partitions_read(sql, params).items():
            assert len(names) == 1, f"{what} reads {sorted(names)} of {table}:\n{sql}"
            assert names != {table}, f"{what} reads {table} unpartitioned:\n{sql}"


def test_each_statement_of_each_call_touches_one_partition(partitioned):
    store = DjangoStore()
    with connection.cursor() as cursor:
        cursor.execute(f"SET search_path TO {SCHEMA}, public")
    # The plain statements, whose plans EXPLAIN shows, not migration 0004's functions.
    postgresql._FUNCTIONS[(connection.alias, connection.settings_dict["NAME"])] = False
    for n in range(20):
        services.create_chronicum(OWNER, f"other-{n}")
        services.record_acta(OWNER, scenario.acta(f"other-{n}"))
    chronicum = "dinner-friday"
    calls = {
        "create": lambda: services.create_chronicum(OWNER, chronicum),
        "write": lambda: services.record_actum(OWNER, scenario.booking_reply()),
        "batch": lambda: services.record_acta(OWNER, scenario.acta()),
        "keyed batch": lambda: services.record_acta(
            OWNER, scenario.acta(), idempotency_key="turn-1"
        ),
        "keyed replay": lambda: services.record_acta(
            OWNER, scenario.acta(), idempotency_key="turn-1"
        ),
        "get": lambda: services.get_chronicum(OWNER, chronicum),
        "window": lambda: services.get_acta(OWNER, chronicum, last_n=20),
        "filtered window": lambda: services.get_acta(
            OWNER, chronicum, last_n=5, kinds=[scenario.M]
        ),
        "budgeted window": lambda: services.get_acta(OWNER, chronicum, max_tokens=60),
        "budgeted window of 3": lambda: services.get_acta(
            OWNER, chronicum, max_tokens=500, last_n=3
        ),
        "follow read": lambda: store.acta_after(
            OWNER, chronicum, ActaQuery(), store.follow_position(OWNER, chronicum, None) - 5, 100
        ),
        "follow position": lambda: store.follow_position(OWNER, chronicum, None),
        "pop": lambda: services.pop_actum(OWNER, chronicum),
        "delete": lambda: services.delete_chronicum(OWNER, chronicum),
    }
    for what, call in calls.items():
        _result, sent = sent_by(call)
        assert_one_partition_each(what, sent)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM acta WHERE chronicum_id = 'other-3'")
        assert cursor.fetchone()[0] == len(scenario.SEVEN)


def test_the_window_stays_on_the_index_without_fresh_statistics(partitioned):
    """Statistics taken while the chronica were small, then a bulk load and no ANALYZE
    (autovacuum off on the partitions): the window of 20 on the chronicum that grew is
    an index scan of one partition, newest first, and no sort."""
    with connection.cursor() as cursor:
        cursor.execute(f"SET search_path TO {SCHEMA}, public")
        cursor.execute(
            "INSERT INTO chronica (id, owner_id, started_at, last_activity_at)"
            " SELECT 'bulk-' || g, %s, now(), now() FROM generate_series(1, 16) g",
            [OWNER],
        )
        load = (
            "INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at)"
            " SELECT md5(%s || g), 'bulk-' || (1 + g %% 16), 'message', 'human', 'ardian',"
            " 'turn ' || g, now() FROM generate_series(1, %s) g"
        )
        cursor.execute(load, ["small", 160])
        cursor.execute("ANALYZE acta")
        # The chronicum grows first, then many acta of the others after its own.
        cursor.execute(
            "INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at)"
            " SELECT md5('grown' || g), 'bulk-1', 'message', 'human', 'ardian', 'turn ' || g,"
            " now() FROM generate_series(1, 20000) g"
        )
        cursor.execute(load, ["big", 60000])
        dialect = dialect_of(connection)
        for query in (ActaQuery(last_n=20), ActaQuery(last_n=20, max_tokens=400)):
            sql, params = dialect.window_sql("bulk-1", query, OWNER)
            cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
            plan = cursor.fetchone()[0]
            plan = json.loads(plan) if isinstance(plan, str) else plan
            nodes = list(_nodes(plan[0]["Plan"]))
            if query.max_tokens is None:  # (the budget's sorts only the acta it kept)
                assert not [n for n in nodes if n["Node Type"] == "Sort"], plan
            scans = [n for n in nodes if n.get("Relation Name", "").startswith("acta")]
            assert scans, plan
            assert {n["Node Type"] for n in scans} <= {"Index Scan", "Index Only Scan"}, plan
            assert len({n["Relation Name"] for n in scans}) == 1, plan
            if query.max_tokens is None:
                assert scans[0]["Scan Direction"] == "Backward", plan


def test_migration_0004s_functions_write_to_the_partitions(partitioned):
    with connection.cursor() as cursor:
        cursor.execute(f"SET search_path TO {SCHEMA}, public")
    services.create_chronicum(OWNER, "by-function")
    _result, sent = sent_by(lambda: services.record_acta(OWNER, scenario.acta("by-function")))
    assert any("chronica_record_acta(" in sql for sql, _params in sent), sent
    with connection.cursor() as cursor:
        cursor.execute("SELECT tableoid::regclass::text, count(*) FROM acta GROUP BY 1")
        assert len(cursor.fetchall()) == 1
    assert len(services.get_acta(OWNER, "by-function", last_n=20)) == len(scenario.SEVEN)


def _nested_plans(call, function: str) -> list[dict]:
    """The plans of the statements ``function`` ran while ``call`` ran seven times (past
    the plan cache's five custom plans), as auto_explain logged them."""
    messages: list[str] = []
    connection.ensure_connection()
    connection.connection.add_notice_handler(lambda d: messages.append(d.message_primary))
    try:
        with connection.cursor() as cursor:
            cursor.execute("LOAD 'auto_explain'")
            cursor.execute("SET auto_explain.log_min_duration = 0")
            cursor.execute("SET auto_explain.log_nested_statements = on")
            cursor.execute("SET auto_explain.log_format = json")
            cursor.execute("SET client_min_messages = log")
            for _ in range(7):
                call()
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET client_min_messages = notice")
            cursor.execute("SET auto_explain.log_min_duration = -1")
    explained = [json.loads(m.split("plan:", 1)[1]) for m in messages if "plan:" in m]
    assert any(f"{function}(" in p["Query Text"] for p in explained), explained
    return [p for p in explained if f"{function}(" not in p["Query Text"]]


def assert_each_reads_one_partition(inner: list[dict]) -> None:
    assert any("FROM acta a" in p["Query Text"] for p in inner), inner
    assert any("FROM chronica c" in p["Query Text"] for p in inner), inner
    for p in inner:
        touched: dict[str, set[str]] = {}
        for node in _nodes(p["Plan"]):
            name = node.get("Relation Name", "")
            for table in ("acta", "chronica"):
                if name == table or name.startswith(f"{table}_p"):
                    touched.setdefault(table, set()).add(name)
        for table, names in touched.items():
            assert len(names) == 1, f"{table}: {sorted(names)}\n{p['Query Text']}"


@pytest.fixture
def read_among_others(partitioned):
    """The partitioned tables in use, eight chronica of other acta, and "read": its acta."""
    with connection.cursor() as cursor:
        cursor.execute(f"SET search_path TO {SCHEMA}, public")
    for n in range(8):
        services.create_chronicum(OWNER, f"other-{n}")
        services.record_acta(OWNER, scenario.acta(f"other-{n}"))
    services.create_chronicum(OWNER, "read")
    return services.record_acta(OWNER, scenario.acta("read"))


def test_migration_0007s_function_reads_one_partition(read_among_others):
    """``chronica_read_state``'s statements, on the generic plans it keeps: each reads
    one partition (auto_explain shows the plans the function's statements ran)."""
    from chronica.stores.db.state import _read_plan

    stored = read_among_others
    store = DjangoStore()

    def read() -> None:
        plan = _read_plan(connection, OWNER, "ns", "read", ActaQuery(last_n=3), store._database())
        with connection.cursor() as cursor:
            assert run_plan(cursor, plan).acta == stored[-3:]

    assert_each_reads_one_partition(_nested_plans(read, "chronica_read_state"))


def test_migration_0008s_function_reads_one_partition(read_among_others):
    """``chronica_window``'s two statements (the owner's row, the window), on the
    generic plans it keeps: each reads one partition."""
    messages = [a for a in read_among_others if a.kind == scenario.M]

    def read() -> None:
        _result, sent = sent_by(
            lambda: services.get_acta(OWNER, "read", last_n=2, kinds=[scenario.M])
        )
        assert "chronica_window(" in sent[-1][0], sent
        assert _result == messages[-2:]

    inner = _nested_plans(read, "chronica_window")
    assert_each_reads_one_partition(inner)
    for p in inner:
        if "FROM acta a" in p["Query Text"]:
            # The generic plan: newest first off the (chronicum_id, seq) index, no sort.
            nodes = list(_nodes(p["Plan"]))
            assert not [n for n in nodes if n["Node Type"] == "Sort"], p
            scans = [n for n in nodes if n.get("Relation Name", "").startswith("acta")]
            assert [n["Node Type"] for n in scans] == ["Index Scan"], p
            assert scans[0]["Scan Direction"] == "Backward", p
