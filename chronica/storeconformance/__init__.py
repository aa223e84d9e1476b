"""The reusable test-suite every chronica store runs against itself.

The suite is the specification of a store. Use it in a few lines::

    from chronica import storeconformance

    class TestMyStore(storeconformance.StoreConformance):
        def make_store(self):
            return MyStore()

    class TestMyIdempotentStore(storeconformance.IdempotentStoreConformance):
        def make_store(self):
            return MyStore()

Each optional ability of ``chronica.interfaces.BaseStore`` has its suite too, for a
store that sets its ``supports_*`` flag: ``AppendConformance``,
``WindowConformance``, ``ListingConformance``, ``DeleteConformance``,
``PopConformance``, ``FollowConformance``, ``StateConformance``, ``ForkConformance``
and ``CompactionConformance``. ``ALL_SUITES``
lists every suite; ``suites_for(store)`` the ones a store must pass.

The classes work under pytest as they are and as mixins of ``unittest.TestCase``
(for a Django database, ``TransactionTestCase`` or pytest-django's
``django_db(transaction=True)``: the concurrent cases use real threads). Each
case uses fresh random chronicum IDs and never assumes an empty store, so it can
run against a persistent, shared database. Outside a test runner,
``run_test(factory)``, ``run_idempotent_test(factory)`` and
``run_suite(suite, factory)`` run every case.

Import the suites from ``chronica.storeconformance`` itself; the modules they are
written in may change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..interfaces import IdempotentStore, Store
from .append import AppendConformance
from .base import _Base
from .compaction import CompactionConformance, ForkConformance
from .follow import FollowConformance
from .lifecycle import DeleteConformance, ListingConformance, PopConformance
from .state import StateConformance
from .store import IdempotentStoreConformance, StoreConformance
from .windows import WindowConformance

__all__ = [
    "ALL_SUITES",
    "AppendConformance",
    "CompactionConformance",
    "DeleteConformance",
    "FollowConformance",
    "ForkConformance",
    "IdempotentStoreConformance",
    "ListingConformance",
    "PopConformance",
    "StateConformance",
    "StoreConformance",
    "WindowConformance",
    "run_idempotent_test",
    "run_suite",
    "run_test",
    "suites_for",
]


ALL_SUITES: dict[str, type[_Base]] = {
    "Store": StoreConformance,
    "IdempotentStore": IdempotentStoreConformance,
    "append": AppendConformance,
    "window": WindowConformance,
    "listing": ListingConformance,
    "delete": DeleteConformance,
    "pop": PopConformance,
    "follow": FollowConformance,
    "state": StateConformance,
    "fork": ForkConformance,
    "compaction": CompactionConformance,
}
"""Every suite: the seed's two by the protocol they specify, the others by the ability
(``supports_<name>``) they specify."""


def suites_for(store: Any) -> list[type[_Base]]:
    """The suites ``store`` must pass: ``Store``'s, ``IdempotentStore``'s if it is one,
    and one for each ``supports_*`` flag it sets."""
    suites: list[type[_Base]] = [StoreConformance]
    if isinstance(store, IdempotentStore):
        suites.append(IdempotentStoreConformance)
    for suite in ALL_SUITES.values():
        if suite.ability and getattr(store, f"supports_{suite.ability}", False):
            suites.append(suite)
    return suites


def run_suite(suite: type[_Base], factory: Callable[[], Any]) -> None:
    """Run every case of ``suite`` on stores made by ``factory``; raise on the first failure."""
    runner = type("Runner", (suite,), {"make_store": lambda self: factory()})()
    for name in sorted(dir(runner)):
        if name.startswith("test_"):
            getattr(runner, name)()


def run_test(factory: Callable[[], Store]) -> None:
    """Run every ``StoreConformance`` case on stores made by ``factory``.

    Raises ``AssertionError`` on the first failure."""
    run_suite(StoreConformance, factory)


def run_idempotent_test(factory: Callable[[], IdempotentStore]) -> None:
    """Run every ``IdempotentStoreConformance`` case; raise on the first failure."""
    run_suite(IdempotentStoreConformance, factory)
