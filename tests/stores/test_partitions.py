"""PostgreSQL: every statement of a store call names its chronicum by equality on
``chronicum_id`` (``id`` for ``chronica``), so that tables partitioned or distributed
by it send each statement to one partition (docs/deploying-replicas.md, "Sharding").

The tables here are test-only DDL: ``chronica`` and ``acta`` hash-partitioned 8 ways,
in a schema of their own; the connection's ``search_path`` points at it for the test,
so that chronica's statements (their table names unqualified) run on them.
"""

from __future__ import annotations

import json

import pytest
from django.db import connection

from chronica import services
from chronica.stores.db import DjangoStore
from chronica.stores.db.dialects import dialect_of
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
    with connection.cursor() as cursor:
        cursor.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        cursor.execute(DDL)
    try:
        yield
    finally:
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
        "first write": lambda: services.record_actum(
            OWNER, scenario.booking_reply(chronicum_id="first-write")
        ),
        "keyed first write": lambda: services.record_actum(
            OWNER, scenario.booking_reply(chronicum_id="keyed-first"), idempotency_key="k"
        ),
        "page under a byte budget": lambda: services.get_acta_page(
            OWNER, chronicum, last_n=5, max_bytes=200
        ),
        "follow read": lambda: store.acta_after(OWNER, chronicum, ActaQuery(), 5, 100),
        "follow from an actum": lambda: store.acta_after(
            OWNER,
            chronicum,
            ActaQuery(max_bytes=100),
            services.get_acta(OWNER, chronicum)[0].id,
            100,
        ),
        "follow position": lambda: store.acta_after(OWNER, chronicum, ActaQuery(), None, 100),
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
    """Statistics taken while the chronicum was small, then a bulk load and no ANALYZE
    (autovacuum off on the partitions): the window of 20 on the chronicum that grew is
    an index scan of one partition, newest first, stopped by its limit (a sort, if any,
    orders only the page it kept)."""
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
        for query in (
            ActaQuery(last_n=20),
            ActaQuery(last_n=20, max_tokens=400),
            ActaQuery(last_n=20, max_bytes=4096),
        ):
            (sql, params), _page = dialect.window(OWNER, "bulk-1", query)
            cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
            plan = cursor.fetchone()[0]
            plan = json.loads(plan) if isinstance(plan, str) else plan
            nodes = list(_nodes(plan[0]["Plan"]))
            plain = query.max_tokens is None and query.max_bytes is None
            for sort in [n for n in nodes if n["Node Type"] == "Sort"]:
                below = list(_nodes(sort))
                scanned = [n for n in below if n.get("Relation Name", "").startswith("acta")]
                limited = [n for n in below if n["Node Type"] in {"Limit", "CTE Scan"}]
                assert not scanned or limited, f"a sort of the chronicum's acta: {plan}"
            scans = [n for n in nodes if n.get("Relation Name", "").startswith("acta")]
            assert scans, plan
            assert {n["Node Type"] for n in scans} <= {"Index Scan", "Index Only Scan"}, plan
            assert len({n["Relation Name"] for n in scans}) == 1, plan
            if plain:
                assert scans[0]["Scan Direction"] == "Backward", plan
