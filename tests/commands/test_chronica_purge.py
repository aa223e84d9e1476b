"""``manage.py chronica_purge``: last year's dinners go, this week's stay, agents keep writing."""

from __future__ import annotations

import datetime as dt
import io
import threading
import time
import traceback

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, connections

from chronica import Actum, models, services
from chronica.management.commands import chronica_purge

from ..admin.test_admin import Writers
from ..scenario import CHRONICUM, OWNER, A, H, M

pytestmark = pytest.mark.django_db(transaction=True)


def record(chronicum_id: str, count: int, owner: str = OWNER) -> list[Actum]:
    """``count`` messages into the chronicum, recorded in batches of 500."""
    stored: list[Actum] = []
    for start in range(0, count, 500):
        stored += services.record_acta(
            owner,
            [
                Actum(
                    chronicum_id=chronicum_id,
                    kind=M,
                    actor_kind=H,
                    actor=owner,
                    content=f"{chronicum_id} note {i}",
                )
                for i in range(start, min(count, start + 500))
            ],
        )
    return stored


def age(chronicum_id: str, days: int) -> None:
    """Make the chronicum look as if nobody wrote into it for ``days`` days."""
    then = dt.datetime.now(dt.UTC) - dt.timedelta(days=days)
    models.Chronicum.objects.filter(id=chronicum_id).update(started_at=then, last_activity_at=then)


def purge(*args: str, stdout: io.StringIO | None = None) -> list[str]:
    out = stdout or io.StringIO()
    call_command("chronica_purge", *args, stdout=out)
    return out.getvalue().splitlines()


def ids() -> set[str]:
    return set(models.Chronicum.objects.values_list("id", flat=True))


@pytest.fixture
def sessions() -> None:
    """Last year's dinner and lunch, rafa's old lunch, and this week's dinner-friday."""
    record("dinner-last-year", 7)
    record("lunch-last-year", 3)
    record("lunch-rafa-last-year", 2, owner="rafa")
    record(CHRONICUM, 5)
    for chronicum_id, days in (
        ("dinner-last-year", 400),
        ("lunch-last-year", 200),
        ("lunch-rafa-last-year", 300),
        (CHRONICUM, 3),
    ):
        age(chronicum_id, days)


def test_deletes_what_nobody_wrote_into_for_days_and_says_what(sessions):
    lines = purge("--inactive-for", "90")
    assert ids() == {CHRONICUM}
    assert models.Actum.objects.count() == 5
    assert [line.split()[:2] for line in lines[:-1]] == [
        ["deleted", "dinner-last-year"],
        ["deleted", "lunch-rafa-last-year"],
        ["deleted", "lunch-last-year"],
    ]
    assert lines[0].startswith("deleted dinner-last-year (owner ardian, last activity ")
    assert lines[0].endswith(", 7 acta)")
    assert lines[-1].startswith("Deleted 3 chronica (12 acta) inactive since ")
    assert "\r" not in "".join(lines)  # not a terminal: no progress


def test_owner_and_days_narrow_it(sessions):
    lines = purge("--inactive-for", "250", "--owner", OWNER)
    assert ids() == {CHRONICUM, "lunch-last-year", "lunch-rafa-last-year"}
    assert lines[-1].startswith("Deleted 1 chronica (7 acta)")


def test_a_dry_run_deletes_nothing(sessions):
    lines = purge("--inactive-for", "90", "--dry-run")
    assert len(ids()) == 4
    assert lines[0].startswith("would delete dinner-last-year (owner ardian")
    assert lines[-1].startswith("Would delete 3 chronica (12 acta) inactive since ")


def test_nothing_to_delete_says_so(sessions):
    assert purge("--inactive-for", "1000")[-1].startswith("No chronica inactive since ")


def test_each_deleted_chronicum_is_announced_through_services(sessions):
    deleted: list[tuple[str, str]] = []

    def receiver(sender, owner_id, chronicum_id, **kwargs):
        deleted.append((owner_id, chronicum_id))

    from chronica.signals import chronicum_deleted

    chronicum_deleted.connect(receiver)
    try:
        purge("--inactive-for", "90")
    finally:
        chronicum_deleted.disconnect(receiver)
    assert sorted(deleted) == [
        (OWNER, "dinner-last-year"),
        (OWNER, "lunch-last-year"),
        ("rafa", "lunch-rafa-last-year"),
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--inactive-for", "0"], "0 is not from 1"),
        (["--inactive-for", "ninety"], "'ninety' is not a whole number"),
        (["--inactive-for", "90", "--batch-size", "100000"], "100000 is not from 1 to 5,000"),
    ],
)
def test_bad_arguments_are_clear_errors(args, message):
    with pytest.raises(CommandError, match=message):
        purge(*args)


def test_only_a_django_store_can_be_purged(settings):
    settings.CHRONICA = {"STORE": "chronica.stores.memory.InMemoryStore"}
    with pytest.raises(CommandError, match=r"deletes from a DjangoStore; .* InMemoryStore"):
        purge("--inactive-for", "90")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_shows_on_a_terminal_only(sessions):
    terminal = Terminal()
    purge("--inactive-for", "90", stdout=terminal)
    shown = terminal.getvalue()
    assert "\r\x1b[K1/3 dinner-last-year" in shown
    assert "\r\x1b[K3/3 lunch-last-year" in shown
    assert shown.split("\n")[-2].startswith("\r\x1b[KDeleted 3 chronica")


class TransactionSizes:
    """The acta each transaction on the default database deletes."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sizes = [0]
        original = connection.commit

        def commit() -> None:
            original()
            self.sizes.append(0)

        monkeypatch.setattr(connection, "commit", commit)

    def __call__(self, execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if sql.lstrip().upper().startswith(f"DELETE FROM {chronica_purge.ACTA.upper()}"):
            self.sizes[-1] += context["cursor"].rowcount
        return result


def test_a_big_chronicum_goes_in_transactions_of_at_most_the_batch_size(monkeypatch):
    record("dinner-last-year", 2_500)
    age("dinner-last-year", 400)
    sizes = TransactionSizes(monkeypatch)
    with connection.execute_wrapper(sizes):
        lines = purge("--inactive-for", "90", "--batch-size", "1000")
    assert [s for s in sizes.sizes if s] == [1000, 1000, 500]
    assert ids() == set()
    assert lines[0].endswith(", 2,500 acta)")


def test_a_chronicum_written_into_mid_purge_is_kept_without_its_oldest_acta(monkeypatch):
    old = record("dinner-last-year", 2_500)
    age("dinner-last-year", 400)
    reply: list[Actum] = []

    def agent_writes() -> None:
        try:
            actum = Actum(
                chronicum_id="dinner-last-year",
                kind=M,
                actor_kind=A,
                actor="booking",
                content="Same table as last year?",
            )
            reply.append(services.record_actum(OWNER, actum))
        finally:
            connections.close_all()

    agent = threading.Thread(target=agent_writes)
    delete_oldest = chronica_purge.Purge.delete_oldest
    lock_if_inactive = chronica_purge.Purge._lock_if_inactive

    def first_batch_then_the_agent_writes(self, cursor, chronicum_id):
        deleted = delete_oldest(self, cursor, chronicum_id)
        if not agent.is_alive() and not reply:
            agent.start()  # it waits for the chronicum's lock, held until this batch commits
        return deleted

    def once_it_has_written(self, candidate):
        if agent.ident is not None:
            agent.join()
        return lock_if_inactive(self, candidate)

    monkeypatch.setattr(chronica_purge.Purge, "delete_oldest", first_batch_then_the_agent_writes)
    monkeypatch.setattr(chronica_purge.Purge, "_lock_if_inactive", once_it_has_written)
    lines = purge("--inactive-for", "90", "--batch-size", "1000")
    assert lines[0].startswith("kept dinner-last-year (owner ardian")
    assert lines[0].endswith("written into during the purge; 1,000 of its oldest acta were deleted")
    left = services.get_acta(OWNER, "dinner-last-year")
    assert [a.id for a in left] == [a.id for a in old[1000:]] + [reply[0].id]
    assert lines[-1].endswith("Kept 1 written into meanwhile.")


@pytest.mark.slow
def test_agents_writing_meanwhile_never_fail_and_lose_nothing():
    """Old chronica purged 100 acta at a time while three agents write into this week's
    dinner-friday and one, once the purge has reached it, into last year's dinner."""
    old = {f"dinner-{year}": record(f"dinner-{year}", 300) for year in range(2010, 2019)}
    old["dinner-2019"] = record("dinner-2019", 2_000)
    for chronicum_id in old:  # dinner-2019 last: the least recently active go first
        age(chronicum_id, 400)
    record(CHRONICUM, 3)
    out = io.StringIO()
    failures: list[str] = []

    def run_purge() -> None:
        try:
            call_command(
                "chronica_purge", "--inactive-for", "90", "--batch-size", "100", stdout=out
            )
        except BaseException:
            failures.append(traceback.format_exc())
        finally:
            connections.close_all()

    purging = threading.Thread(target=run_purge)
    with Writers(CHRONICUM, count=3) as this_week:
        purging.start()
        deadline = time.monotonic() + 120  # a guard against a hang, not a timing assertion
        while (
            purging.is_alive()
            and models.Actum.objects.filter(chronicum_id="dinner-2019").count() == 2_000
        ):
            assert time.monotonic() < deadline, "the purge never reached dinner-2019"
            time.sleep(0.002)
        with Writers("dinner-2019", count=1) as last_year:
            last_year.wait_for(3)
            purging.join()
        this_week.wait_for(2)
    assert not failures, failures[0]
    assert not this_week.errors, this_week.errors[0]
    assert not last_year.errors, last_year.errors[0]
    # Every actum an agent was told is stored, is.
    stored = set(models.Actum.objects.values_list("id", flat=True))
    for writers in (this_week, last_year):
        assert {a.id for acks in writers.acknowledged for a in acks} <= stored
    # The old chronica nobody wrote into are gone; last year's dinner is either gone
    # and written again, or kept without some of its oldest acta.
    assert ids() == {CHRONICUM, "dinner-2019"}
    old_ids = [a.id for a in old["dinner-2019"]]
    left = [i for i in old_ids if i in stored]
    assert left == old_ids[len(old_ids) - len(left) :]
    lines = out.getvalue().splitlines()
    assert lines[-1].startswith("Deleted ")
    assert any(line.startswith(("deleted dinner-2019", "kept dinner-2019")) for line in lines)
