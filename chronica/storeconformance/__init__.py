"""The reusable test-suite every chronica store runs against itself.

The suite is the specification of a store. Use it in a few lines::

    from chronica import storeconformance

    class TestMyStore(storeconformance.StoreConformance):
        def make_store(self):
            return MyStore()

    class TestMyIdempotentStore(storeconformance.IdempotentStoreConformance):
        def make_store(self):
            return MyStore()

Each optional capability of ``chronica.interfaces`` has its suite too:
``BatchStoreConformance``, ``WindowStoreConformance``, ``ListingStoreConformance``,
``DeletingStoreConformance``, ``PoppingStoreConformance``,
``OwnerScopedStoreConformance``, ``PagingStoreConformance`` and
``StateStoreConformance``; ``ALL_SUITES`` lists every suite by capability.

The classes work under pytest as they are and as mixins of ``unittest.TestCase``
(for a Django database, ``TransactionTestCase`` or pytest-django's
``django_db(transaction=True)``: the concurrent cases use real threads). Each
case uses fresh random chronicum IDs and never assumes an empty store, so it can
run against a persistent, shared database. Outside a test runner,
``run_test(factory)``, ``run_idempotent_test(factory)`` and
``run_suite(suite, factory)`` run every case.

Import the suites from ``chronica.storeconformance`` itself; the modules they are
written in (``store``, ``windows``, ``lifecycle``, ``state``, by capability, and
``base`` for what they share) may change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..interfaces import IdempotentStore, Store
from .base import _Base
from .lifecycle import (
    DeletingStoreConformance,
    ListingStoreConformance,
    OwnerScopedStoreConformance,
    PoppingStoreConformance,
)
from .state import StateStoreConformance
from .store import IdempotentStoreConformance, StoreConformance
from .windows import BatchStoreConformance, PagingStoreConformance, WindowStoreConformance

__all__ = [
    "ALL_SUITES",
    "BatchStoreConformance",
    "DeletingStoreConformance",
    "IdempotentStoreConformance",
    "ListingStoreConformance",
    "OwnerScopedStoreConformance",
    "PagingStoreConformance",
    "PoppingStoreConformance",
    "StateStoreConformance",
    "StoreConformance",
    "WindowStoreConformance",
    "run_idempotent_test",
    "run_suite",
    "run_test",
]


ALL_SUITES: dict[str, type[_Base]] = {
    "Store": StoreConformance,
    "IdempotentStore": IdempotentStoreConformance,
    "BatchStore": BatchStoreConformance,
    "WindowStore": WindowStoreConformance,
    "ListingStore": ListingStoreConformance,
    "DeletingStore": DeletingStoreConformance,
    "PoppingStore": PoppingStoreConformance,
    "OwnerScopedStore": OwnerScopedStoreConformance,
}
"""Every suite, by the name of the capability (in ``chronica.interfaces``) it specifies."""


def run_suite(suite: type[_Base], factory: Callable[[], Any]) -> None:
    """Run every case of ``suite`` on stores made by ``factory``; raise on the first failure."""
    _run_cases(suite, factory)


def _run_cases(suite: type[_Base], factory: Callable[[], Any]) -> None:
    runner = type("Runner", (suite,), {"make_store": lambda self: factory()})()
    for name in sorted(dir(runner)):
        if name.startswith("test_"):
            getattr(runner, name)()


def run_test(factory: Callable[[], Store]) -> None:
    """Run every ``StoreConformance`` case on stores made by ``factory``.

    Raises ``AssertionError`` on the first failure."""
    _run_cases(StoreConformance, factory)


def run_idempotent_test(factory: Callable[[], IdempotentStore]) -> None:
    """Run every ``IdempotentStoreConformance`` case; raise on the first failure."""
    _run_cases(IdempotentStoreConformance, factory)
