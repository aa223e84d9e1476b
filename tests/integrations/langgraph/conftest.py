from __future__ import annotations

import gc

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.db import connections


@pytest.fixture(autouse=True)
def _close_thread_connections():
    """LangGraph runs a sync graph's puts in worker threads, and the asyncio methods run
    in asgiref's thread: each opened a connection of its own. Close them after each test
    (a dead thread's on garbage collection) so that the test database can be dropped."""
    yield
    async_to_sync(sync_to_async(connections.close_all))()
    connections.close_all()
    gc.collect()
