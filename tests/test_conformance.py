"""chronica's own stores run the shipped conformance suite, as a third-party store would."""

import pytest

from chronica import storeconformance
from chronica.stores.db import DjangoStore
from chronica.stores.memory import InMemoryStore


class TestInMemoryStore(storeconformance.StoreConformance):
    def make_store(self):
        return InMemoryStore()


class TestInMemoryStoreIdempotent(storeconformance.IdempotentStoreConformance):
    def make_store(self):
        return InMemoryStore()


@pytest.mark.django_db(transaction=True)
class TestDjangoStore(storeconformance.StoreConformance):
    def make_store(self):
        return DjangoStore()


@pytest.mark.django_db(transaction=True)
class TestDjangoStoreIdempotent(storeconformance.IdempotentStoreConformance):
    def make_store(self):
        return DjangoStore()


def test_run_test_runs_every_case_outside_a_test_runner():
    storeconformance.run_test(InMemoryStore)
    storeconformance.run_idempotent_test(InMemoryStore)


class ForgetfulStore(InMemoryStore):
    """The seed's SQL-store bug: a missing chronicum answers an empty list."""

    def acta(self, chronicum_id, query):
        try:
            return super().acta(chronicum_id, query)
        except LookupError:
            return []


class LateStore(InMemoryStore):
    """Sorts by a clock instead of keeping write order."""

    def acta(self, chronicum_id, query):
        return sorted(super().acta(chronicum_id, query), key=lambda a: a.content)


class DoubleStore(InMemoryStore):
    """Ignores idempotency keys."""

    def record_idempotent(self, actum, key):
        return self.record(actum)


@pytest.mark.parametrize(
    ("store", "case", "suite"),
    [
        (ForgetfulStore, "test_acta_of_a_missing_chronicum_raises_not_found", "StoreConformance"),
        (LateStore, "test_a_thousand_acta_come_back_in_write_order", "StoreConformance"),
        (
            DoubleStore,
            "test_the_same_key_twice_gives_the_same_actum_and_stores_one",
            "IdempotentStoreConformance",
        ),
        (
            DoubleStore,
            "test_concurrent_calls_with_one_key_store_one_actum",
            "IdempotentStoreConformance",
        ),
    ],
)
def test_the_suite_catches_a_broken_store(store, case, suite):
    runner = type(
        "Runner", (getattr(storeconformance, suite),), {"make_store": lambda self: store()}
    )()
    with pytest.raises(AssertionError):
        getattr(runner, case)()


def test_only_django_store_takes_the_owner_scoped_shortcut():
    from chronica.interfaces import OwnerScopedStore

    assert isinstance(DjangoStore(), OwnerScopedStore)
    assert not isinstance(InMemoryStore(), OwnerScopedStore)
