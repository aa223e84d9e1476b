"""chronica's own stores run the shipped conformance suite, as a third-party store would:
every suite of ``storeconformance.ALL_SUITES`` on InMemoryStore and on DjangoStore."""

import dataclasses
import time

import pytest

from chronica import ActaQuery, Recorded, interfaces, storeconformance
from chronica.errors import ChronicumExists
from chronica.stores.db import DjangoStore
from chronica.stores.memory import InMemoryStore, _Entry

for _capability, _suite in storeconformance.ALL_SUITES.items():
    globals()[f"TestInMemoryStore{_capability}"] = type(
        f"TestInMemoryStore{_capability}", (_suite,), {"make_store": lambda self: InMemoryStore()}
    )
    globals()[f"TestDjangoStore{_capability}"] = pytest.mark.django_db(transaction=True)(
        type(f"TestDjangoStore{_capability}", (_suite,), {"make_store": lambda self: DjangoStore()})
    )


class TestInMemoryStorePagingStore(storeconformance.PagingStoreConformance):
    def make_store(self):
        return InMemoryStore()


@pytest.mark.django_db(transaction=True)
class TestDjangoStorePagingStore(storeconformance.PagingStoreConformance):
    """A window page and its next cursor from one consistent read (issue 25 item 5)."""

    def make_store(self):
        return DjangoStore()


def test_django_store_is_a_paging_store():
    assert isinstance(DjangoStore(), interfaces.PagingStore)


@pytest.mark.parametrize("capability", sorted(storeconformance.ALL_SUITES))
def test_both_stores_have_every_capability(capability):
    protocol = getattr(interfaces, capability)
    assert isinstance(InMemoryStore(), protocol)
    assert isinstance(DjangoStore(), protocol)


def test_run_test_runs_every_case_outside_a_test_runner():
    storeconformance.run_test(InMemoryStore)
    storeconformance.run_idempotent_test(InMemoryStore)
    for suite in storeconformance.ALL_SUITES.values():
        storeconformance.run_suite(suite, InMemoryStore)


# -- broken stores: each suite must catch the bug it exists for ---------------------


class ForgetfulStore(InMemoryStore):
    """A SQL store's natural bug: a missing chronicum answers an empty list."""

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

    def record_batch(self, acta, key, tokens):
        return super().record_batch(acta, None, tokens)


class InterleavingStore(InMemoryStore):
    """Records a batch one actum at a time, so other writers get in between."""

    def record_batch(self, acta, key, tokens):
        stored = []
        for actum, count in zip(acta, tokens, strict=True):
            stored += super().record_batch([actum], None, [count]).acta
            time.sleep(0.001)  # lets the other writers in, as a slow database would
        return Recorded(stored)


class TextOnlyStore(InMemoryStore):
    """Drops call_id and data, as a store written before they existed would."""

    def acta(self, chronicum_id, query):
        return [
            dataclasses.replace(a, call_id="", data=None) for a in super().acta(chronicum_id, query)
        ]


class NoBudgetStore(InMemoryStore):
    """Ignores before and max_tokens."""

    def acta(self, chronicum_id, query):
        return super().acta(chronicum_id, dataclasses.replace(query, before=None, max_tokens=None))


class SkippingBudgetStore(InMemoryStore):
    """Skips an actum over the budget instead of ending the window there."""

    def acta(self, chronicum_id, query):
        if query.max_tokens is None:
            return super().acta(chronicum_id, query)
        everything = super().acta(chronicum_id, dataclasses.replace(query, max_tokens=None))
        entry = self._entry(chronicum_id)
        budget, kept = query.max_tokens, []
        for actum in reversed(everything):
            count = entry.tokens.get(actum.id, 0)
            if count <= budget:
                budget -= count
                kept.append(actum)
        return kept[::-1]


class StartedOrderStore(InMemoryStore):
    """Lists by when chronica started, not by their last activity."""

    def list_chronica(self, owner_id, limit, after):
        with self._lock:
            mine = [e.chronicum for e in self._entries.values() if e.chronicum.owner_id == owner_id]
        mine.sort(key=lambda c: (c.started_at, c.id), reverse=True)
        if after is not None:
            mine = mine[[c.id for c in mine].index(after.id) + 1 :]
        return mine[:limit]


class CarelessDeleteStore(InMemoryStore):
    """Deletes whoever owns the chronicum."""

    def delete(self, chronicum_id, owner_id):
        super().delete(chronicum_id, self.get(chronicum_id).owner_id)


class OldestPopStore(InMemoryStore):
    """Pops the oldest actum."""

    def pop(self, chronicum_id, owner_id):
        entry = self._owned(chronicum_id, owner_id)
        with entry.lock:
            return entry.acta.pop(0) if entry.acta else None


class UnscopedStore(InMemoryStore):
    """Writes into anyone's chronicum."""

    def record_batch_if_owner(self, owner_id, acta, key, tokens):
        try:
            return self.record_batch(acta, key, tokens)
        except LookupError:
            return None


class CheckThenInsertStore(InMemoryStore):
    """Creates by looking first and inserting after, without a lock: racing creates
    of one ID all succeed, and the last one's owner stays."""

    def create(self, chronicum):
        if chronicum.id in self._entries:
            raise ChronicumExists(chronicum.id)
        time.sleep(0.01)  # a round trip between the look and the insert
        self._entries[chronicum.id] = _Entry(chronicum)


class RememberedOwnerStore(InMemoryStore):
    """Checks the owner against the one it saw first for an ID, which a delete and
    another owner's create have changed."""

    def __init__(self):
        super().__init__()
        self.first_owner = {}

    def create(self, chronicum):
        super().create(chronicum)
        self.first_owner.setdefault(chronicum.id, chronicum.owner_id)

    def record_batch_if_owner(self, owner_id, acta, key, tokens):
        if self.first_owner.get(acta[0].chronicum_id) != owner_id:
            return None
        return self.record_batch(acta, key, tokens)


class AnyOlderStore(InMemoryStore):
    """Tells of an older page when any older actum is there, filtered out or not."""

    def acta_page_if_owner(self, owner_id, chronicum_id, query):
        found = self.acta_if_owner(owner_id, chronicum_id, query)
        if found is None:
            return None
        every = self.acta(chronicum_id, ActaQuery())
        return found, bool(found) and every.index(found[0]) > 0


BROKEN = [
    (ForgetfulStore, "Store", "test_acta_of_a_missing_chronicum_raises_not_found"),
    (LateStore, "Store", "test_a_thousand_acta_come_back_in_write_order"),
    (TextOnlyStore, "Store", "test_call_id_and_data_round_trip"),
    (DoubleStore, "IdempotentStore", "test_the_same_key_twice_gives_the_same_actum_and_stores_one"),
    (DoubleStore, "IdempotentStore", "test_concurrent_calls_with_one_key_store_one_actum"),
    (DoubleStore, "BatchStore", "test_a_keyed_batch_is_replayed_whole_and_a_retry_discarded"),
    (InterleavingStore, "BatchStore", "test_concurrent_batches_are_each_contiguous"),
    (NoBudgetStore, "WindowStore", "test_before_pages_back"),
    (NoBudgetStore, "WindowStore", "test_max_tokens_keeps_the_newest_that_fit"),
    (SkippingBudgetStore, "WindowStore", "test_max_tokens_keeps_the_newest_that_fit"),
    (StartedOrderStore, "ListingStore", "test_an_owners_chronica_latest_activity_first"),
    (
        CarelessDeleteStore,
        "DeletingStore",
        "test_delete_of_someone_elses_or_a_missing_chronicum_removes_nothing",
    ),
    (
        CheckThenInsertStore,
        "Store",
        "test_racing_creates_give_the_id_to_one_owner_for_good",
    ),
    (
        RememberedOwnerStore,
        "DeletingStore",
        "test_a_deleting_store_checks_the_owner_where_it_writes_and_reads",
    ),
    (OldestPopStore, "PoppingStore", "test_pop_takes_the_newest_until_none"),
    (UnscopedStore, "OwnerScopedStore", "test_someone_else_and_a_missing_chronicum_get_none"),
    (AnyOlderStore, "PagingStore", "test_more_when_an_older_actum_passes_the_filters"),
]


@pytest.mark.parametrize(
    ("store", "capability", "case"), BROKEN, ids=lambda v: getattr(v, "__name__", v)
)
def test_the_suite_catches_a_broken_store(store, capability, case):
    suites = {**storeconformance.ALL_SUITES, "PagingStore": storeconformance.PagingStoreConformance}
    suite = suites[capability]
    runner = type("Runner", (suite,), {"make_store": lambda self: store()})()
    with pytest.raises(AssertionError):
        getattr(runner, case)()
