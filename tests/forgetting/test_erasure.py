"""Erasure: ardian leaves and asks to be forgotten. Everything of his goes, in short
transactions, a record of it stays (no owner ID, no content), writers racing with it
land before it (and go) or are refused; on both databases."""

from __future__ import annotations

import hashlib
import threading
import time
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connections
from django.utils import timezone

from chronica import (
    ChronicumNotFound,
    Erasure,
    NotPermitted,
    StateChange,
    StateScope,
    models,
    services,
)
from chronica.services import AgentIdentity, Chronicarius, OwnerIdentity
from chronica.signals import owner_erased
from chronica.stores.db import DjangoStore

from .. import scenario
from ..scenario import CHRONICUM, OWNER

pytestmark = pytest.mark.django_db(transaction=True)

HASH = hashlib.sha256(OWNER.encode()).hexdigest()


def everything_of(owner: str) -> None:
    """ardian's three sessions, his state, a credential he issued."""
    for n in range(3):
        services.record_acta(owner, scenario.acta(f"{owner}-{CHRONICUM}-{n}"))
    services.update_state(
        owner,
        f"{owner}-{CHRONICUM}-0",
        [StateChange(namespace="dinner", scope=StateScope.OWNER, set={"diet": "vegetarian"})],
    )
    services.issue_credential(owner, "booking")


def left_of(owner: str) -> dict[str, int]:
    return {
        "chronica": models.Chronicum.objects.filter(owner_id=owner).count(),
        "acta": models.Actum.objects.filter(chronicum__owner_id=owner).count(),
        "states": models.SharedState.objects.filter(owner_id=owner).count(),
        "credentials": models.AgentCredential.objects.filter(owner_id=owner).count(),
    }


def test_everything_of_the_owner_goes_and_a_record_stays():
    everything_of(OWNER)
    everything_of("rafa")
    erasure = services.erase_owner(OWNER, reason="asked to be forgotten")
    assert isinstance(erasure, Erasure)
    assert erasure.owner_hash == HASH
    assert erasure.reason == "asked to be forgotten"
    assert erasure.counts["chronica"] == 3
    assert erasure.counts["acta"] == 21
    assert erasure.counts["chronica_states"] == 1
    assert erasure.counts["chronica_agent_credentials"] == 1
    assert left_of(OWNER) == {"chronica": 0, "acta": 0, "states": 0, "credentials": 0}
    assert left_of("rafa") == {"chronica": 3, "acta": 21, "states": 1, "credentials": 1}
    (record,) = models.ErasureRecord.objects.all()
    assert record.owner_hash == HASH
    assert record.erasing_owner is None
    assert record.completed_at == erasure.at
    assert record.counts == dict(erasure.counts)
    assert OWNER not in repr(
        list(models.ErasureRecord.objects.values_list("owner_hash", "reason", "counts"))
    )
    # The owner may come back: a new session is a new session.
    services.record_actum(OWNER, scenario.acta()[0])


def test_a_dry_run_counts_and_removes_nothing():
    everything_of(OWNER)
    planned = services.erase_owner(OWNER, dry_run=True)
    assert planned.counts["acta"] == 21
    assert left_of(OWNER)["acta"] == 21
    assert not models.ErasureRecord.objects.exists()


def test_an_agent_credential_may_not_erase():
    everything_of(OWNER)
    agent = AgentIdentity(owner_id=OWNER, actor="booking", key_id="b00k1n9b00k1")
    with pytest.raises(NotPermitted):
        services.acting_as(agent).erase_owner(OWNER)
    with pytest.raises(NotPermitted):
        services.acting_as(OwnerIdentity("rafa")).erase_owner(OWNER)
    assert left_of(OWNER)["acta"] == 21
    assert services.acting_as(OwnerIdentity(OWNER)).erase_owner(OWNER).counts["acta"] == 21


def test_an_interrupted_erasure_refuses_writes_and_is_taken_up_again():
    everything_of(OWNER)

    def failing(sender, **kwargs):
        raise RuntimeError("the integration's database went away")

    owner_erased.connect(failing)
    try:
        with pytest.raises(RuntimeError):
            services.erase_owner(OWNER, reason="first try")
    finally:
        owner_erased.disconnect(failing)
    (record,) = models.ErasureRecord.objects.all()
    assert record.completed_at is None
    assert record.erasing_owner == OWNER
    assert record.counts["acta"] == 21  # the batches were done
    # Meanwhile nothing of the owner can come back.
    with pytest.raises(ChronicumNotFound):
        services.record_actum(OWNER, scenario.acta()[0])
    assert left_of(OWNER)["chronica"] == 0
    erasure = services.erase_owner(OWNER, reason="second try")
    assert erasure.reason == "first try"
    assert erasure.counts["acta"] == 21
    assert erasure.counts["chronica_agent_credentials"] == 1
    assert models.ErasureRecord.objects.get().erasing_owner is None
    assert left_of(OWNER) == {"chronica": 0, "acta": 0, "states": 0, "credentials": 0}


@pytest.mark.parametrize("auto_create", [True, False])
def test_while_an_erasure_is_under_way_no_write_lands_in_what_is_left(auto_create):
    """An erasure removes the owner's chronica in batches: one not removed yet takes no
    write meanwhile, with AUTO_CREATE off too (a write that never creates)."""
    services.record_acta(OWNER, scenario.acta())
    models.ErasureRecord.objects.create(
        owner_hash=HASH, erasing_owner=OWNER, started_at=timezone.now()
    )
    chronicarius = Chronicarius(DjangoStore(), auto_create=auto_create)
    writes = [
        lambda: chronicarius.record_actum(OWNER, scenario.acta()[0]),
        lambda: chronicarius.record_acta(OWNER, scenario.acta()[:2]),
        lambda: chronicarius.record_actum(OWNER, scenario.acta()[0], idempotency_key="k"),
    ]
    for write in writes:
        with pytest.raises(ChronicumNotFound):
            write()
    assert models.Actum.objects.filter(chronicum_id=CHRONICUM).count() == 7


def test_the_integrations_erase_in_the_same_transaction():
    seen = []

    def receiver(sender, owner_id, owner_hash, dry_run, **kwargs):
        seen.append((owner_id, owner_hash, dry_run))
        return {"langgraph_checkpoints": 0 if dry_run else 4}

    owner_erased.connect(receiver)
    try:
        everything_of(OWNER)
        erasure = services.erase_owner(OWNER)
    finally:
        owner_erased.disconnect(receiver)
    assert seen == [(OWNER, HASH, False)]
    assert erasure.counts["langgraph_checkpoints"] == 4


def test_the_batches_are_small(monkeypatch):
    from chronica.stores.db import forgetting

    monkeypatch.setattr(forgetting, "BATCH", 2)
    for n in range(5):
        services.record_actum(OWNER, scenario.acta(f"{CHRONICUM}-{n}")[0])
    assert services.erase_owner(OWNER).counts["chronica"] == 5
    assert left_of(OWNER)["chronica"] == 0


@pytest.mark.slow
def test_writers_racing_an_erasure_land_before_it_or_are_refused():
    """Real threads: ardian's agents keep writing into his sessions, and first writes
    into new ones, while he is erased; rafa writes beside. Every write of ardian's that
    returned before the erasure's last step is gone; nothing fails but by refusal."""
    for n in range(40):
        services.record_acta(OWNER, scenario.acta(f"{CHRONICUM}-{n}"))
    services.record_acta("rafa", scenario.acta("rafa-lunch"))
    last_step = threading.Event()
    done = threading.Event()
    before_last: list[str] = []
    errors: list[BaseException] = []
    refused = [0]
    rafa_wrote = [0]

    def at_last_step(sender, **kwargs):
        last_step.set()
        return {}

    def writer(i: int) -> None:
        n = 0
        try:
            while not done.is_set():
                n += 1
                target = f"{CHRONICUM}-{(i * 7 + n) % 40}" if n % 3 else f"new-{i}-{n}"
                try:
                    actum = services.record_actum(OWNER, scenario.acta(target)[0])
                except ChronicumNotFound:
                    refused[0] += 1
                    continue
                if not last_step.is_set():
                    before_last.append(actum.id)
                time.sleep(0.001)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    def rafa() -> None:
        try:
            while not done.is_set():
                services.record_actum("rafa", scenario.acta("rafa-lunch")[0])
                rafa_wrote[0] += 1
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    owner_erased.connect(at_last_step)
    threads = [threading.Thread(target=writer, args=(i,)) for i in range(3)]
    threads.append(threading.Thread(target=rafa))
    try:
        for thread in threads:
            thread.start()
        time.sleep(0.2)
        erasure = services.erase_owner(OWNER)
        time.sleep(0.1)
    finally:
        done.set()
        for thread in threads:
            thread.join(30)
        owner_erased.disconnect(at_last_step)
    assert errors == []
    assert before_last, "writes landed while the erasure ran"
    left = set(models.Actum.objects.filter(chronicum__owner_id=OWNER).values_list("id", flat=True))
    assert not set(before_last) & left
    assert erasure.counts["acta"] >= 40 * 7
    assert rafa_wrote[0] > 0
    assert models.Actum.objects.filter(chronicum_id="rafa-lunch").count() == 7 + rafa_wrote[0]


def test_the_memory_store_erases_too():
    from chronica.stores.memory import InMemoryStore

    chronicarius = Chronicarius(InMemoryStore())
    chronicarius.record_acta(OWNER, scenario.acta())
    erasure = chronicarius.erase_owner(OWNER, reason="x")
    assert erasure.counts["acta"] == 7
    with pytest.raises(ChronicumNotFound):
        chronicarius.get_chronicum(OWNER, CHRONICUM)


class TestCommand:
    def erase(self, *args: str) -> str:
        out = StringIO()
        call_command("chronica_erase", *args, stdout=out)
        return out.getvalue()

    def test_a_dry_run_then_the_erasure(self):
        everything_of(OWNER)
        said = self.erase("--owner", OWNER, "--dry-run")
        assert "would remove" in said
        assert "acta: 21" in said
        assert left_of(OWNER)["acta"] == 21
        said = self.erase("--owner", OWNER, "--reason", "GDPR request 17")
        assert HASH in said
        assert "acta: 21" in said
        assert left_of(OWNER)["acta"] == 0
        assert models.ErasureRecord.objects.get().reason == "GDPR request 17"


def test_erasure_needs_a_store_that_forgets():
    from ..teststores import PlainStore

    with pytest.raises(Exception, match="supports_forget"):
        Chronicarius(PlainStore()).erase_owner(OWNER)
    assert isinstance(DjangoStore(), DjangoStore)


def test_on_postgresql_a_batchs_delete_reads_the_index():
    """The batch's IDs travel as an array (= ANY): each is an index probe. A JSON
    array read by a set-returning function instead made the planner scan the whole
    acta table once per batch (an erasure 12 times slower on 1.6M acta)."""
    from django.db import connection

    from chronica.stores.db.dialects import dialect_of
    from chronica.stores.db.forgetting import STATEMENTS

    if connection.vendor != "postgresql":
        pytest.skip("EXPLAIN of PostgreSQL's plan")
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")  # an empty test table: the plan's shape
        cursor.execute(
            "EXPLAIN " + STATEMENTS[dialect_of(connection).features]["DELETE_ACTA"],
            [["dinner-1", "dinner-2"]],
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("RESET enable_seqscan")
    assert "Index" in plan, plan
    assert "Function Scan" not in plan, plan


@pytest.mark.django_db(transaction=True)
def test_on_sqlite_an_erasure_begun_while_writers_hold_the_lock_waits_and_begins():
    """SQLite gives up waiting for its write lock after the busy timeout ("database is
    locked"), as writers busy beside an erasure can make it: the erasure's record, its
    first write, is tried again like its batches, and the erasure goes on."""
    from django.db import OperationalError, connection

    from chronica import services

    if connection.vendor != "sqlite":
        pytest.skip("the busy timeout is SQLite's; PostgreSQL waits for its row locks")
    services.record_acta(OWNER, scenario.acta())
    refused = []

    def busy_once(execute, sql, params, many, context):
        if "INSERT" in sql and "chronica_erasures" in sql and not refused:
            refused.append(sql)
            raise OperationalError("database is locked")
        return execute(sql, params, many, context)

    with connection.execute_wrapper(busy_once):
        erasure = services.erase_owner(OWNER, reason="asked")
    assert refused, "the record's INSERT was not attempted"
    assert erasure.counts["chronica"] == 1
    with pytest.raises(ChronicumNotFound):
        services.get_acta(OWNER, CHRONICUM)
