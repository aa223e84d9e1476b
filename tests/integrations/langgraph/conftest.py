from __future__ import annotations

import gc

import pytest
from asgiref.sync import SyncToAsync
from django.db import connections


@pytest.fixture(autouse=True)
def _close_thread_connections():
    """The asyncio methods run in asgiref's one thread for sync code, and a sync graph's
    puts in LangGraph's worker threads: close their connections after each test (asgiref's
    there, a dead thread's on garbage collection) so that the test database can be
    dropped."""
    yield
    SyncToAsync.single_thread_executor.submit(connections.close_all).result()
    connections.close_all()
    gc.collect()
