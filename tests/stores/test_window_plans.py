"""Windows cost what they read, however old the page or stale the statistics
(issue 20 item 7): told by the database's plan, never by a timing."""

from __future__ import annotations

import json

import pytest
from django.db import connection

from chronica.stores.db.dialects import dialect_of
from chronica.values import ActaQuery

OWNER = "ardian"


def _sqlite_plan(owner, query):
    """The steps of SQLite's plan for the window of ``query`` (``EXPLAIN QUERY PLAN``)."""
    if connection.vendor != "sqlite":
        pytest.skip("EXPLAIN QUERY PLAN of SQLite: this run is on PostgreSQL")
    (sql, params), _page = dialect_of(connection).window(owner, "plan-1", query)
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + sql, params)
        return [row[-1] for row in cursor.fetchall()]


def _nodes(plan):
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "query",
    [
        ActaQuery(last_n=20, before="x1000"),
        ActaQuery(last_n=20, before="x1000", kinds=frozenset({"message"})),
        ActaQuery(max_tokens=8000, before="x1000"),
        ActaQuery(last_n=20, before="x1000", max_bytes=8 * 2**20),
    ],
    ids=["before", "filtered", "budget", "bytes"],
)
@pytest.mark.parametrize("owner", [OWNER, None], ids=["owned", "plain"])
def test_sqlite_pages_back_with_an_index_seek_on_seq(query, owner):
    """Paging back with ``before=`` seeks the (chronicum_id, seq) index to the page: the
    rows visited are the page's, not every newer actum's."""
    plan = _sqlite_plan(owner, query)
    seeks = [step for step in plan if "acta_chronicum_seq (chronicum_id=? AND seq<?)" in step]
    assert seeks, plan
    ranges = [step for step in plan if "(chronicum_id>? AND chronicum_id<?)" in step]
    assert ranges == [], plan


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "query",
    [
        ActaQuery(last_n=20, max_bytes=8 * 2**20),
        ActaQuery(max_bytes=8 * 2**20),
        ActaQuery(last_n=5000, max_bytes=8 * 2**20, kinds=frozenset({"message"})),
        ActaQuery(last_n=20, before="x1000", max_bytes=8 * 2**20),
    ],
    ids=["last-n", "no-limit", "filtered-over-1000", "before"],
)
@pytest.mark.parametrize("owner", [OWNER, None], ids=["owned", "plain"])
def test_sqlite_byte_budget_window_reads_as_it_goes(query, owner):
    """SQLite's window with a byte budget walks the index newest first and hands each
    row over as it is read: no sorter and no materialized subquery that would hold
    every candidate, its content included, before the first row (the reader stops at
    the first actum past the budget: tests/core/test_windows.py)."""
    plan = _sqlite_plan(owner, query)
    assert any("acta USING INDEX acta_chronicum_seq" in step for step in plan), plan
    assert not [step for step in plan if "TEMP B-TREE" in step or "MATERIALIZE" in step], plan


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("owner", [OWNER, None], ids=["owned", "plain"])
def test_postgresql_newest_window_needs_no_fresh_statistics(owner):
    """A last_n=20 window of a session bulk-written a moment ago, before any ANALYZE:
    an index scan on (chronicum_id, seq), no sort (issue 20 item 7). The chronicum is
    named by ``chronicum_id = ANY(ARRAY[...])``: only that index serves the order."""
    if connection.vendor != "postgresql":
        pytest.skip("EXPLAIN of PostgreSQL's plan: this run is on SQLite")
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO chronica (id, owner_id, started_at, last_activity_at)"
            " VALUES ('fresh-1', %s, now(), now())",
            [OWNER],
        )
        # Statistics taken while the session was small, as autovacuum leaves them
        # between a bulk write and its next ANALYZE: they know nothing of the 60,000.
        cursor.execute(
            "INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at)"
            " SELECT 'early-' || g, 'fresh-1', 'message', 'human', 'ardian', 'x', now()"
            " FROM generate_series(1, 50) g"
        )
        cursor.execute("ANALYZE chronica")
        cursor.execute("ANALYZE acta")
        cursor.execute(
            "INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at)"
            " SELECT md5(g::text), 'fresh-1', 'message', 'human', 'ardian', 'x', now()"
            " FROM generate_series(1, 60000) g"
        )
        (sql, params), _page = dialect_of(connection).window(owner, "fresh-1", ActaQuery(last_n=20))
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
    nodes = list(_nodes(plan[0]["Plan"]))
    kinds = [node["Node Type"] for node in nodes]
    sorts = [node for node in nodes if node["Node Type"] == "Sort"]
    assert not any("chronicum_id" in str(node.get("Sort Key")) for node in sorts), json.dumps(plan)
    assert not any(kind.startswith("Bitmap") for kind in kinds), json.dumps(plan)
    scans = [node for node in nodes if node.get("Index Name") == "acta_chronicum_seq"]
    assert scans
    assert all(node["Node Type"] in ("Index Scan", "Index Only Scan") for node in scans)
