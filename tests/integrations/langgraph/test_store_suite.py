"""The store tests of ``langgraph-checkpoint-sqlite`` (sync and asyncio) on
``ChronicaStore``: every one that needs a store and nothing of SQLite's or of a
semantic index (see ``store_suite.py``). Our own tests of owners and TTL follow."""

from __future__ import annotations

import datetime as dt

import pytest

from chronica.integrations.langgraph import ChronicaStore

from . import store_suite

pytestmark = pytest.mark.django_db(transaction=True)

_SYNC_MODULE = store_suite.module("test_store")
SYNC = store_suite.store_tests(_SYNC_MODULE)
ASYNC = store_suite.store_tests(
    store_suite.module("test_async_store", theirs={"test_store": _SYNC_MODULE})
)
# AsyncSqliteStore's sync methods refuse to run on the event loop's thread
# (InvalidStateError); ChronicaStore is one store with both, and Django refuses its sync
# calls there (SynchronousOnlyOperation).
NOT_CHRONICA_STORES = {"test_no_running_loop": "an AsyncSqliteStore's own rule"}
# LangGraph's own tests, once a build on each database (the newest pair's once legs,
# scripts/ci.py), as its graph suite and the SDK's: ~35 s of processor a leg, and what
# they check is the store on the database, not the pair. Our own tests below, and the
# checkpoint conformance suite, run in every leg.
globals().update({name: pytest.mark.once(test) for name, test in SYNC.items()})
globals().update(
    {
        f"{name}_async": pytest.mark.once(test)
        for name, test in ASYNC.items()
        if name not in NOT_CHRONICA_STORES
    }
)
# 6,000 concurrent calls (15-20 s of processor, the heaviest of the suite).
globals()["test_large_batches_async_async"] = pytest.mark.slow(
    globals()["test_large_batches_async_async"]
)


@pytest.fixture
def store():
    return ChronicaStore("store-suite-owner")


def test_the_suites_reach_chronica_store():
    # Fewer means the selection stopped reaching them (renamed, a new fixture).
    assert len(SYNC) >= 18
    assert len(ASYNC) >= 8


def test_another_owners_items_are_not_there():
    ours, theirs = ChronicaStore("ada"), ChronicaStore("grace")
    ours.put(("memories", "food"), "likes", {"text": "sambal"})
    assert theirs.get(("memories", "food"), "likes") is None
    assert theirs.search(("memories",)) == []
    assert theirs.list_namespaces() == []
    theirs.delete(("memories", "food"), "likes")
    assert ours.get(("memories", "food"), "likes").value == {"text": "sambal"}


def test_an_expired_item_is_gone_and_a_read_refreshes_its_ttl():
    store = ChronicaStore("ada", ttl={"default_ttl": 1.0, "refresh_on_read": True})
    store.put(("m",), "short", {"v": 1}, ttl=0.0001)
    store.put(("m",), "long", {"v": 2})
    import time

    time.sleep(0.05)
    assert store.get(("m",), "short") is None
    assert [i.key for i in store.search(("m",))] == ["long"]
    assert store.sweep_ttl() == 1
    from chronica.integrations.langgraph.models import LangGraphItem

    before = LangGraphItem.objects.get(key="long").expires_at
    store.get(("m",), "long")
    after = LangGraphItem.objects.get(key="long").expires_at
    assert after > before
    assert after - dt.datetime.now(dt.UTC) > dt.timedelta(seconds=50)
