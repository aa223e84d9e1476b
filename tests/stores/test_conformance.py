"""chronica's own stores run the shipped conformance suite, as a third-party store would:
every suite of ``storeconformance.ALL_SUITES`` on InMemoryStore and on DjangoStore; and
the suite catches each bug it exists for, in a store broken on purpose."""

import dataclasses
import time

import pytest

from chronica import ActaQuery, Recorded, interfaces, storeconformance
from chronica.errors import ChronicumExists
from chronica.stores.db import DjangoStore
from chronica.stores.memory import InMemoryStore
from chronica.stores.memory.entry import Entry

for _name, _suite in storeconformance.ALL_SUITES.items():
    globals()[f"TestInMemoryStore{_name.title()}"] = type(
        f"TestInMemoryStore{_name.title()}",
        (_suite,),
        {"make_store": lambda self: InMemoryStore()},
    )
    globals()[f"TestDjangoStore{_name.title()}"] = pytest.mark.django_db(transaction=True)(
        type(
            f"TestDjangoStore{_name.title()}",
            (_suite,),
            {"make_store": lambda self: DjangoStore()},
        )
    )


@pytest.mark.parametrize("ability", interfaces.ABILITIES)
def test_both_stores_have_every_ability(ability):
    assert getattr(InMemoryStore(), f"supports_{ability}") is True
    assert getattr(DjangoStore(), f"supports_{ability}") is True


def test_suites_for_a_store_follow_its_flags():
    assert storeconformance.suites_for(InMemoryStore()) == list(
        storeconformance.ALL_SUITES.values()
    )
    assert storeconformance.suites_for(PlainFour()) == [storeconformance.StoreConformance]


def test_run_test_runs_every_case_outside_a_test_runner():
    storeconformance.run_test(InMemoryStore)
    storeconformance.run_idempotent_test(InMemoryStore)
    for suite in storeconformance.ALL_SUITES.values():
        storeconformance.run_suite(suite, InMemoryStore)


def test_a_store_of_the_seeds_four_methods_passes_the_seeds_suite():
    """A store that inherits nothing and has only the four methods is a correct store."""
    storeconformance.run_test(PlainFour)


class PlainFour:
    """The seed's four methods, over InMemoryStore, and nothing else."""

    def __init__(self):
        self.inner = InMemoryStore()

    def create(self, chronicum):
        self.inner.create(chronicum)

    def get(self, chronicum_id):
        return self.inner.get(chronicum_id)

    def record(self, actum):
        return self.inner.record(actum)

    def acta(self, chronicum_id, query):
        return self.inner.acta(chronicum_id, query)


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

    def append(self, owner_id, chronicum_id, acta, *, key=None, **kwargs):
        return super().append(owner_id, chronicum_id, acta, key=None, **kwargs)


class InterleavingStore(InMemoryStore):
    """Records a batch one actum at a time, so other writers get in between."""

    def append(self, owner_id, chronicum_id, acta, *, tokens=None, **kwargs):
        stored = []
        for actum in acta:
            stored += super().append(owner_id, chronicum_id, [actum], **kwargs).acta
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

    def window(self, owner_id, chronicum_id, query):
        return super().window(
            owner_id, chronicum_id, dataclasses.replace(query, before=None, max_tokens=None)
        )


class SkippingBudgetStore(InMemoryStore):
    """Skips an actum over the budget instead of ending the window there."""

    def window(self, owner_id, chronicum_id, query):
        if query.max_tokens is None:
            return super().window(owner_id, chronicum_id, query)
        found = super().window(owner_id, chronicum_id, dataclasses.replace(query, max_tokens=None))
        if found is None:
            return None
        tokens = self._entries[chronicum_id].tokens
        budget, kept = query.max_tokens, []
        for actum in reversed(found[0]):
            count = tokens.get(actum.id, 0)
            if count <= budget:
                budget -= count
                kept.append(actum)
        return kept[::-1], False


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

    def delete(self, owner_id, chronicum_id):
        if chronicum_id not in self._entries:
            return False
        return super().delete(self.get(chronicum_id).owner_id, chronicum_id)


class OldestPopStore(InMemoryStore):
    """Pops the oldest actum."""

    def pop(self, owner_id, chronicum_id):
        entry = self._locked(owner_id, chronicum_id)
        if entry is None:
            raise LookupError(chronicum_id)
        try:
            return entry.acta.pop(0) if entry.acta else None
        finally:
            entry.lock.release()


class UnscopedStore(InMemoryStore):
    """Writes into anyone's chronicum."""

    def append(self, owner_id, chronicum_id, acta, **kwargs):
        return super().append(None, chronicum_id, acta, **kwargs)


class CheckThenInsertStore(InMemoryStore):
    """Creates by looking first and inserting after, without a lock: racing creates
    of one ID all succeed, and the last one's owner stays."""

    def create(self, chronicum):
        if chronicum.id in self._entries:
            raise ChronicumExists(chronicum.id)
        time.sleep(0.01)  # a round trip between the look and the insert
        self._entries[chronicum.id] = Entry(chronicum)


class RememberedOwnerStore(InMemoryStore):
    """Checks the owner against the one it saw first for an ID, which a delete and
    another owner's create have changed."""

    def __init__(self):
        super().__init__()
        self.first_owner = {}

    def create(self, chronicum):
        super().create(chronicum)
        self.first_owner.setdefault(chronicum.id, chronicum.owner_id)

    def append(self, owner_id, chronicum_id, acta, **kwargs):
        if owner_id is not None and self.first_owner.get(chronicum_id, owner_id) != owner_id:
            return None
        return super().append(None, chronicum_id, acta, **kwargs)


class UncheckedReplayStore(InMemoryStore):
    """Answers a used key from a table of keys, whoever owns the chronicum now."""

    def __init__(self):
        super().__init__()
        self.batches = {}

    def append(self, owner_id, chronicum_id, acta, *, key=None, **kwargs):
        if key is not None and (chronicum_id, key) in self.batches:
            return Recorded(self.batches[chronicum_id, key], replayed=True)
        recorded = super().append(owner_id, chronicum_id, acta, key=key, **kwargs)
        if key is not None and recorded is not None and not recorded.replayed:
            self.batches[chronicum_id, key] = recorded.acta
        return recorded


class EmptyReplayStore(InMemoryStore):
    """Answers a used key with what is left of its batch, nothing included."""

    def __init__(self):
        super().__init__()
        self.used = set()

    def append(self, owner_id, chronicum_id, acta, *, key=None, **kwargs):
        if key is not None and (chronicum_id, key) in self.used:
            return Recorded([], replayed=True)
        if key is not None:
            self.used.add((chronicum_id, key))
        return super().append(owner_id, chronicum_id, acta, key=key, **kwargs)


class AnyOlderStore(InMemoryStore):
    """Tells of an older page when any older actum is there, filtered out or not."""

    def window(self, owner_id, chronicum_id, query):
        found = super().window(owner_id, chronicum_id, query)
        if found is None:
            return None
        every = super().window(owner_id, chronicum_id, ActaQuery())[0]
        return found[0], bool(found[0]) and every.index(found[0][0]) > 0


class SkippingFollowStore(InMemoryStore):
    """Reads forward from a position but hands back the position of the newest actum
    when it stops at its limit: the follower misses what lies between."""

    def acta_after(self, owner_id, chronicum_id, query, position, limit):
        found = super().acta_after(owner_id, chronicum_id, query, position, limit)
        if found is None or not found[2]:
            return found
        newest = super().acta_after(owner_id, chronicum_id, query, None, 0)
        return found[0], newest[1], True


BROKEN = [
    (ForgetfulStore, "Store", "test_acta_of_a_missing_chronicum_raises_not_found"),
    (LateStore, "Store", "test_a_thousand_acta_come_back_in_write_order"),
    (TextOnlyStore, "Store", "test_call_id_and_data_round_trip"),
    (DoubleStore, "IdempotentStore", "test_the_same_key_twice_gives_the_same_actum_and_stores_one"),
    (DoubleStore, "IdempotentStore", "test_concurrent_calls_with_one_key_store_one_actum"),
    (DoubleStore, "append", "test_a_keyed_batch_is_replayed_whole_and_a_retry_discarded"),
    (InterleavingStore, "append", "test_concurrent_batches_are_each_contiguous"),
    (UnscopedStore, "append", "test_someone_else_and_a_missing_chronicum_get_none"),
    (NoBudgetStore, "window", "test_before_pages_back"),
    (NoBudgetStore, "window", "test_max_tokens_keeps_the_newest_that_fit"),
    (SkippingBudgetStore, "window", "test_max_tokens_keeps_the_newest_that_fit"),
    (AnyOlderStore, "window", "test_more_when_an_older_actum_passes_the_filters"),
    (StartedOrderStore, "listing", "test_an_owners_chronica_latest_activity_first"),
    (
        CarelessDeleteStore,
        "delete",
        "test_delete_of_someone_elses_or_a_missing_chronicum_removes_nothing",
    ),
    (CheckThenInsertStore, "Store", "test_racing_creates_give_the_id_to_one_owner_for_good"),
    (
        RememberedOwnerStore,
        "delete",
        "test_the_former_owner_neither_writes_nor_reads_after_a_re_create",
    ),
    (UncheckedReplayStore, "delete", "test_a_replay_answers_only_the_owners_acta"),
    (EmptyReplayStore, "pop", "test_a_replay_whose_batch_is_gone_lands_again"),
    (OldestPopStore, "pop", "test_pop_takes_the_newest_until_none"),
    (SkippingFollowStore, "follow", "test_after_an_actum_filters_and_limits"),
]


@pytest.mark.parametrize(
    ("store", "suite", "case"), BROKEN, ids=lambda v: getattr(v, "__name__", v)
)
def test_the_suite_catches_a_broken_store(store, suite, case):
    runner = type(
        "Runner", (storeconformance.ALL_SUITES[suite],), {"make_store": lambda self: store()}
    )()
    with pytest.raises(AssertionError):
        getattr(runner, case)()
