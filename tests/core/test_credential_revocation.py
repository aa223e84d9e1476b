"""A credential revoked while its agent writes: the write lands before the revocation or
not at all. The check is in the statement (or transaction) that appends, not only at
sign-in: a request authenticated a moment before the revocation writes nothing after it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from django.db import connection, connections
from django.test import override_settings

from chronica import services
from chronica.errors import InvalidCredential
from chronica.models import AgentCredential
from chronica.services import authenticate_credential, issue_credential, revoke_credential
from chronica.values import StateChange

from .. import scenario

OWNER = "ardian"
pytestmark = pytest.mark.django_db(transaction=True)


@contextlib.contextmanager
def before_the_first_statement(act: Callable[[], object]) -> Iterator[None]:
    """Run ``act`` in another thread (its own connection) just before this thread sends
    its next statement, and wait for it."""
    done = []

    def wrapper(execute, sql, params, many, context):
        if not done:
            done.append(True)
            thread = threading.Thread(target=lambda: (act(), connections.close_all()))
            thread.start()
            thread.join(30)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(wrapper):
        yield
    assert done, "no statement was sent"


def booking() -> tuple[services.Chronicarius, str]:
    """The booking agent's Chronicarius, signed in with a credential of its own."""
    issued = issue_credential(OWNER, "booking")
    return services.acting_as(authenticate_credential(issued.secret)), issued.info.key_id


WRITES = {
    "one actum": lambda c: c.record_actum(OWNER, scenario.booking_reply()),
    "a batch": lambda c: c.record_acta(OWNER, [scenario.booking_reply()] * 2),
    "keyed": lambda c: c.record_actum(OWNER, scenario.booking_reply(), idempotency_key="k"),
    "first write": lambda c: c.record_actum(
        OWNER, scenario.booking_reply(chronicum_id="lunch-saturday")
    ),
    "with state": lambda c: c.record_acta(
        OWNER,
        [scenario.booking_reply()],
        state=[StateChange(namespace="dinner", set={"booked": True})],
    ),
}


@pytest.mark.parametrize("write", list(WRITES.values()), ids=list(WRITES))
def test_a_write_authenticated_before_the_revocation_writes_nothing_after_it(write):
    services.record_actum(OWNER, scenario.acta()[0])
    services.update_state(
        OWNER, scenario.CHRONICUM, [StateChange(namespace="dinner", set={"party": 4})]
    )
    agent, key_id = booking()
    before = services.get_acta(OWNER, scenario.CHRONICUM)
    with (
        pytest.raises(InvalidCredential) as refused,
        before_the_first_statement(lambda: revoke_credential(key_id)),
    ):
        write(agent)
    assert refused.value.reason == "revoked"
    assert services.get_acta(OWNER, scenario.CHRONICUM) == before
    state = services.get_state(OWNER, "dinner", scenario.CHRONICUM).chronicum_state
    assert state == {"party": 4}
    with pytest.raises(services.ChronicumNotFound):
        services.get_chronicum(OWNER, "lunch-saturday")


@pytest.mark.parametrize("write", ["one actum", "a batch", "keyed"])
def test_with_auto_create_off_a_write_after_the_revocation_is_refused_too(write):
    """With CHRONICA["AUTO_CREATE"] off a write never creates its chronicum, and takes
    another statement on PostgreSQL: it checks the credential in that statement too."""
    services.record_actum(OWNER, scenario.acta()[0])
    with override_settings(CHRONICA={"AUTO_CREATE": False}):
        agent, key_id = booking()
        before = services.get_acta(OWNER, scenario.CHRONICUM)
        with (
            pytest.raises(InvalidCredential) as refused,
            before_the_first_statement(lambda: revoke_credential(key_id)),
        ):
            WRITES[write](agent)
        assert refused.value.reason == "revoked"
        assert services.get_acta(OWNER, scenario.CHRONICUM) == before


def test_an_expired_credential_writes_nothing():
    services.record_actum(OWNER, scenario.acta()[0])
    issued = issue_credential(OWNER, "booking", expires_in=dt.timedelta(hours=1))
    agent = services.acting_as(authenticate_credential(issued.secret))
    # It expires between the agent's sign-in and its write.
    AgentCredential.objects.filter(key_id=issued.info.key_id).update(
        expires_at=dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
    )
    with pytest.raises(InvalidCredential) as refused:
        agent.record_actum(OWNER, scenario.booking_reply())
    assert refused.value.reason == "expired"
    assert len(services.get_acta(OWNER, scenario.CHRONICUM)) == 1


def test_writers_racing_a_revocation_land_before_it_or_not_at_all():
    """Four threads write with the credential while it is revoked: once
    ``revoke_credential`` has returned, no write of it lands, and every write told it
    landed is there."""
    services.record_actum(OWNER, scenario.acta()[0])
    agent, key_id = booking()
    landed: list[str] = []
    refused: list[str] = []

    def writer(n: int) -> None:
        try:
            for i in range(500):
                try:
                    reply = scenario.booking_reply(f"held, {n}-{i}")
                    landed.append(agent.record_actum(OWNER, reply).id)
                    # An agent between two writes: SQLite's lock is not fair, and four
                    # writers in a tight loop could keep the revocation waiting until
                    # they are done (it waits its turn: tests/stores/test_sqlite_locks.py).
                    time.sleep(0.002)
                except InvalidCredential:
                    refused.append(f"{n}-{i}")
                    return
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    threading.Event().wait(0.05)
    revoke_credential(key_id)
    fence = {a.id for a in services.get_acta(OWNER, scenario.CHRONICUM)}
    for thread in threads:
        thread.join(60)
    stored = {a.id for a in services.get_acta(OWNER, scenario.CHRONICUM)}
    assert set(landed) <= stored, "a write told it landed is not there"
    assert stored == fence, "a write of the revoked credential landed after the revocation"
    assert refused, "no write was refused: the race never ran"
