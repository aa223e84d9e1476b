"""SQLite writers wait their turn, even past the busy timeout, and never see "database is
locked" from a transaction of chronica's own."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest
from django.db import OperationalError, connection, transaction

from chronica import services

from . import scenario
from .scenario import CHRONICUM, OWNER


@pytest.fixture
def held_write_lock():
    """Another process's long transaction: it holds SQLite's write lock for 7 seconds,
    longer than the 5-second busy timeout of Django's default options."""
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's write lock: this run is on PostgreSQL")
    path = connection.settings_dict["NAME"]
    holding, done = threading.Event(), threading.Event()

    def hold():
        other = sqlite3.connect(path, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            holding.set()
            time.sleep(7)
            other.execute("COMMIT")
        finally:
            other.close()
            done.set()

    thread = threading.Thread(target=hold)
    thread.start()
    assert holding.wait(10)
    yield done
    thread.join()


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
