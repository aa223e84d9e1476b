"""A sync graph puts its checkpoints from the threads of a pool LangGraph starts for
each run: the saver closes the connections it opened there, so that runs do not pile
up open connections (a few hundred runs would exhaust ``max_connections``)."""

from __future__ import annotations

import pytest
from django.db import connection

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
