"""A worker outlives its database connection.

chronica runs in long-lived workers (Celery, asyncio agent loops) that never get
Django's per-request clean-up. When PostgreSQL kills the worker's connection or
restarts, the call that meets the dead connection may fail with a DatabaseError;
the next call through chronica.services must work, and nothing recorded is lost.
"""

from __future__ import annotations

import contextlib

import pytest
from asgiref.sync import sync_to_async
from django.db import DatabaseError, connection, connections, transaction

from chronica import services

from .. import scenario
from ..database import server_connection
from ..scenario import CHRONICUM, OWNER

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def postgres():
    if connection.vendor != "postgresql":
        pytest.skip("SQLite is a file, not a server: there is no connection to kill")
    services.reset_chronicarius()
    yield
    services.reset_chronicarius()
    # A failed test may leave the connection dead: the database flush after it must not fail too.
    connection.close()


def backend_pid() -> int:
    """The server process behind this thread's Django connection."""
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def terminate(pid: int) -> None:
    """Kill one backend (ours only: other test runs share the server) and wait until it is gone."""
    with server_connection() as other:
        gone = other.execute("SELECT pg_terminate_backend(%s, 30000)", [pid]).fetchone()[0]
    assert gone, f"backend {pid} was still alive 30 s after pg_terminate_backend"


def record_dinner() -> list:
    return [services.record_actum(OWNER, a) for a in scenario.acta()]


def record_booking_reply():
    # The same key every time: whether or not a failed attempt landed, the reply is there once.
    return services.record_actum(OWNER, scenario.booking_reply(), idempotency_key="booking-reply-1")


FIRST_CALLS = {
    "record_actum": record_booking_reply,
    "get_acta": lambda: services.get_acta(OWNER, CHRONICUM, kinds=["message"], last_n=3),
    "get_chronicum": lambda: services.get_chronicum(OWNER, CHRONICUM),
}


@pytest.mark.parametrize("first_call", FIRST_CALLS)
def test_the_call_after_a_terminated_connection_works(postgres, first_call):
    dinner = record_dinner()
    pid = backend_pid()
    terminate(pid)

    # The call that meets the dead connection may fail, and only with a DatabaseError.
    with contextlib.suppress(DatabaseError):
        FIRST_CALLS[first_call]()

    reply = record_booking_reply()
    assert services.get_acta(OWNER, CHRONICUM) == [*dinner, reply]
    assert services.get_chronicum(OWNER, CHRONICUM).last_activity_at == reply.at
    assert backend_pid() != pid


def test_a_connection_killed_twice_in_a_row(postgres):
    dinner = record_dinner()
    for _ in range(2):
        pid = backend_pid()
        terminate(pid)
        with contextlib.suppress(DatabaseError):
            services.get_chronicum(OWNER, CHRONICUM)
        assert services.get_acta(OWNER, CHRONICUM) == dinner
        assert backend_pid() != pid


def test_a_task_transaction_that_meets_a_dead_connection(postgres):
    """A Celery task that wraps its work in transaction.atomic fails as a whole; the next
    task works."""
    dinner = record_dinner()
    pid = backend_pid()
    terminate(pid)

    with pytest.raises(DatabaseError), transaction.atomic():
        record_booking_reply()

    reply = record_booking_reply()
    assert services.get_acta(OWNER, CHRONICUM) == [*dinner, reply]
    assert backend_pid() != pid


class TestAsyncioAgentLoop:
    @pytest.fixture(autouse=True)
    async def close_executor_connections(self):
        yield
        # The a* twins ran on sync_to_async's executor thread: close its connection,
        # or the test database cannot be dropped at the end.
        await sync_to_async(connections.close_all)()

    async def test_the_next_turn_after_a_terminated_connection_works(self, postgres):
        dinner = [await services.arecord_actum(OWNER, a) for a in scenario.acta()]
        # The a* calls run in asgiref's thread, on its connection.
        pid = await sync_to_async(backend_pid)()
        terminate(pid)

        with contextlib.suppress(DatabaseError):
            await services.aget_acta(OWNER, CHRONICUM, kinds=["message"], last_n=3)

        window = await services.aget_acta(OWNER, CHRONICUM, kinds=["message"], last_n=3)
        assert window == [a for a in dinner if a.kind == "message"][-3:]
        assert await sync_to_async(backend_pid)() != pid


@pytest.mark.slow
def test_the_call_after_a_server_restart_works(postgres):
    # A server of our own (tests/clusters.py), restarted under an open connection: the
    # shared server of the machine is never restarted under the other suites.
    from ..clusters import cluster

    with cluster() as c:
        primary = {"default": c.database(c.primary_port)}
        c.run("migrate", databases=primary, timeout=120)
        answer = c.run("restart", str(c.directory), databases=primary, timeout=180)
    assert answer["acta"] == answer["written"]
    assert answer["new_connection"]
