"""SQLite writers wait their turn, even past the busy timeout, and never see "database is
locked" from a transaction of chronica's own."""

from __future__ import annotations

import time

import pytest
from django.db import OperationalError, transaction

from chronica import services

from .. import scenario
from ..scenario import CHRONICUM, OWNER


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_writer_waits_past_the_busy_timeout(held_write_lock):
    began = time.monotonic()
    stored = services.record_actum(OWNER, scenario.booking_reply())
    assert held_write_lock.is_set()
    assert time.monotonic() - began > 5
    assert services.get_acta(OWNER, CHRONICUM) == [stored]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_inside_the_callers_transaction_the_error_is_the_callers(held_write_lock):
    with pytest.raises(OperationalError, match="locked"), transaction.atomic():
        services.record_actum(OWNER, scenario.booking_reply())


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_revoking_a_credential_waits_past_the_busy_timeout(request):
    """Agents writing hard must not make revoke_credential fail with "locked"."""
    issued = services.issue_credential(OWNER, "booking")
    held_write_lock = request.getfixturevalue("held_write_lock")  # from here on
    began = time.monotonic()
    assert services.revoke_credential(issued.info.key_id)
    assert held_write_lock.is_set()
    assert time.monotonic() - began > 5
    assert services.list_credentials(OWNER)[0].revoked_at is not None
