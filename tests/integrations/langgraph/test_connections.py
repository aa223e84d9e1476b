"""A sync graph puts its checkpoints from the threads of a pool LangGraph starts for
each run: the saver closes the connections it opened there, so that runs do not pile
up open connections (a few hundred runs would exhaust ``max_connections``)."""

from __future__ import annotations

import pytest
from django.db import connection, connections
from django.test import override_settings

from chronica.integrations.langgraph import ChronicaSaver

from .scenario import OWNER, build, config, say

pytestmark = pytest.mark.django_db(transaction=True)


def backends() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
        return int(cursor.fetchone()[0])


@pytest.mark.skipif(connection.vendor != "postgresql", reason="counts PostgreSQL's backends")
def test_runs_of_a_sync_graph_leave_no_connection_open():
    graph = build(ChronicaSaver(OWNER))
    graph.invoke(say("hello", 0), config("connections"))
    before = backends()
    for turn in range(1, 16):
        graph.invoke(say(f"turn {turn}", turn), config("connections"))
    assert backends() <= before + 2


class _Pooled:
    """Every model on the pooled alias: chronica's store and the saver's rows alike."""

    def db_for_read(self, model, **hints):
        return "pooled"

    def db_for_write(self, model, **hints):
        return "pooled"

    def allow_relation(self, obj1, obj2, **hints):
        return True


@pytest.mark.skipif(connection.vendor != "postgresql", reason="Django's pool is PostgreSQL's")
@pytest.mark.django_db(transaction=True, databases=["default", "pooled"])
def test_a_sync_graph_gives_its_connections_back_to_djangos_pool():
    """LangGraph's worker threads (five a run here) each take a connection: with Django's
    pool (``OPTIONS["pool"]``, the "pooled" alias of tests/settings.py: at most two, a
    checkout waits a second at most) they take it from the pool and give it back, so that
    15 runs go through two pooled connections (one kept would make a later checkout time
    out), and every message is recorded."""
    from chronica import services

    pooled = connections["pooled"]
    try:
        with override_settings(DATABASE_ROUTERS=[f"{__name__}._Pooled"]):
            graph = build(ChronicaSaver(OWNER))
            for turn in range(15):
                graph.invoke(say(f"turn {turn}", turn), config("pooled"))
            acta = services.get_acta(OWNER, "pooled")
            stats = pooled.pool.get_stats()
    finally:
        pooled.close()
        pooled.close_pool()
    assert [a.content for a in acta if a.actor_kind == "human"] == [
        f"turn {turn}" for turn in range(15)
    ]
    assert stats["pool_size"] <= 2
    assert stats.get("requests_errors", 0) == 0
