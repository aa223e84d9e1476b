"""Stores the tests need beside chronica's own."""

import time

from chronica.stores.db import DjangoStore
from chronica.stores.memory import InMemoryStore


class PlainStore:
    """A Store with the four methods and no record_idempotent, over InMemoryStore.

    Keeps the keyword arguments it was built with (``STORE_OPTIONS``) and the
    names of the calls it received."""

    def __init__(self, **options):
        self.options = options
        self.inner = InMemoryStore()
        self.calls: list[str] = []

    def create(self, chronicum):
        self.calls.append("create")
        self.inner.create(chronicum)

    def record(self, actum):
        self.calls.append("record")
        return self.inner.record(actum)

    def acta(self, chronicum_id, query):
        self.calls.append("acta")
        return self.inner.acta(chronicum_id, query)

    def get(self, chronicum_id):
        self.calls.append("get")
        return self.inner.get(chronicum_id)


class SlowCreateStore(DjangoStore):
    """DjangoStore taking a few milliseconds after each create, as a loaded database
    would between two statements: it widens the window in which a write that has just
    created its chronicum can meet a delete and another owner's create."""

    def create(self, chronicum):
        super().create(chronicum)
        time.sleep(0.015)


# DjangoStore has its state capability mixed in; the tests that name it this way still do.
StateDjangoStore = DjangoStore
