"""An owner's write never lands in another owner's chronicum (rule 4 under a race).

ardian writes into X while, in other calls, ardian deletes X and rafa creates X. If
the owner were checked before the write and the append went in unchecked, ardian's
actum would be stored in rafa's X. These tests make that interleaving certain with a
store that pauses right before its owner-checked ``append``: in the pause, ardian's
delete and rafa's create run (X may be ardian's before, or no one's: a first write).
The write must then answer ``ChronicumNotFound`` (X is rafa's now), and rafa's X must
hold nothing of ardian's.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import http.client
import json
import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from asgiref.sync import sync_to_async
from django.db import connections

from chronica import Actum, ChronicumNotFound
from chronica.services import Chronicarius
from chronica.stores.db import DjangoStore
from chronica.stores.memory import InMemoryStore

from ..exampleproject import PYTHON, environment, free_port, serving
from ..teststores import PlainStore

X = "dinner-friday"


def reply(content: str = "A table for four at Rumah Teduh is held.") -> Actum:
    return Actum(
        chronicum_id=X, kind="message", actor_kind="agent", actor="booking", content=content
    )


def pausing(base: type) -> type:
    """``base`` whose first ``append`` of ardian's stops before it appends, until the
    test lets it go (``paused`` while it waits)."""

    class Pausing(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.paused = threading.Event()
            self.go = threading.Event()
            self.armed = False

        def append(self, owner_id: Any, *args: Any, **kwargs: Any) -> Any:
            if self.armed and owner_id == "ardian" and not self.paused.is_set():
                self.paused.set()
                assert self.go.wait(30), "the test never let the write go on"
            return super().append(owner_id, *args, **kwargs)

    return Pausing


WRITES: dict[str, Callable[[Chronicarius], Any]] = {
    "one actum": lambda c: c.record_actum("ardian", reply()),
    "a batch": lambda c: c.record_acta("ardian", [reply("first"), reply("second")]),
    "keyed": lambda c: c.record_actum("ardian", reply(), idempotency_key="booking-reply-1"),
    "keyed batch": lambda c: c.record_acta(
        "ardian", [reply("first"), reply("second")], idempotency_key="booking-reply-1"
    ),
    "asyncio": lambda c: asyncio.run(_closing(c.arecord_actum("ardian", reply()))),
    "asyncio batch": lambda c: asyncio.run(
        _closing(c.arecord_acta("ardian", [reply("a"), reply("b")]))
    ),
}


async def _closing(call: Any) -> Any:
    """Await ``call``, then close the connections of asgiref's executor thread, where
    the sync part of an a* call ran."""
    try:
        return await call
    finally:
        await sync_to_async(connections.close_all)()


def race(
    store: Any, write: Callable[[Chronicarius], Any], first: bool = False
) -> BaseException | None:
    """ardian's write into X (ardian's, or no one's yet with ``first``); in its pause
    before the append, ardian deletes X and rafa creates it. What the write raised
    (``None`` if it returned)."""
    c = Chronicarius(store)
    if not first:
        c.record_actum("ardian", reply("ardian's, before"))
    store.armed = True
    raised: list[BaseException | None] = []

    def ardian_writes() -> None:
        try:
            write(c)
            raised.append(None)
        except BaseException as exc:
            raised.append(exc)
        finally:
            connections.close_all()

    writer = threading.Thread(target=ardian_writes)
    writer.start()
    try:
        assert store.paused.wait(30), "ardian's write never reached its append"
        if not first:
            c.delete_chronicum("ardian", X)
        c.create_chronicum("rafa", X)
    finally:
        store.go.set()
        writer.join(60)
    assert not writer.is_alive()
    return raised[0]


@pytest.fixture(
    params=["memory", pytest.param("django", marks=pytest.mark.django_db(transaction=True))]
)
def store(request: pytest.FixtureRequest) -> Any:
    return pausing(InMemoryStore if request.param == "memory" else DjangoStore)()


@pytest.mark.parametrize("first", [False, True], ids=["ardians-x", "first-write"])
@pytest.mark.parametrize("write", list(WRITES.values()), ids=list(WRITES))
def test_a_write_racing_a_delete_and_a_re_create_never_lands_in_rafas(store, write, first):
    raised = race(store, write, first)

    assert isinstance(raised, ChronicumNotFound), raised
    c = Chronicarius(store)
    assert c.get_acta("rafa", X) == []
    assert c.get_chronicum("rafa", X).owner_id == "rafa"
    with pytest.raises(ChronicumNotFound):
        c.get_acta("ardian", X)


def test_after_the_race_ardian_writes_where_ardian_owns(store):
    race(store, WRITES["one actum"])
    c = Chronicarius(store)
    with pytest.raises(ChronicumNotFound):
        c.record_actum("ardian", reply("Again."))
    mine = c.record_actum("ardian", dataclasses.replace(reply("Mine."), chronicum_id="ardian-x"))
    assert c.get_acta("ardian", "ardian-x") == [mine]
    assert c.get_acta("rafa", X) == []


def test_a_store_that_deletes_without_checking_owners_in_its_writes_cannot_delete():
    """A store that deletes but whose writes do not check the owner in the same step
    would let the race above through: Chronicarius deletes only through a store with
    ``supports_append`` and ``supports_window`` too."""

    class DeletingPlainStore(PlainStore):
        supports_delete = True

        def delete(self, owner_id: str, chronicum_id: str) -> bool:
            return self.inner.delete(owner_id, chronicum_id)

    from chronica.errors import StoreUnsupported

    c = Chronicarius(DeletingPlainStore())
    c.record_actum("ardian", reply())
    with pytest.raises(StoreUnsupported, match="supports_append and supports_window"):
        c.delete_chronicum("ardian", X)
    assert [a.content for a in c.get_acta("ardian", X)] == [reply().content]


def _behind_the_lock(store: InMemoryStore, step: Callable[[], Any]) -> list[Any]:
    """Run ``step`` (a call into X) in a thread that looked X up and waits for its lock,
    while ardian's X is deleted and rafa creates X; what ``step`` answered."""
    c = Chronicarius(store)
    entry = store._entries[X]
    done: list[Any] = []
    with entry.lock:
        reader = threading.Thread(target=lambda: done.append(step()))
        reader.start()
        threading.Event().wait(0.2)  # the thread has looked X up and waits for the lock
        del store._entries[X]  # ardian's delete (under the lock it would wait for)
        c.create_chronicum("rafa", X)
        c.record_actum("rafa", dataclasses.replace(reply("rafa's own"), actor="rafa-agent"))
    reader.join(30)
    return done


def test_the_memory_store_checks_the_owner_under_the_chronicums_lock():
    """The memory store's owner-checked write and window: a delete and rafa's create
    between their look-up and their lock leave rafa's X untouched and unread."""
    store = InMemoryStore()
    Chronicarius(store).create_chronicum("ardian", X)
    assert _behind_the_lock(store, lambda: store.append("ardian", X, [reply()])) == [None]
    assert [a.content for a in Chronicarius(store).get_acta("rafa", X)] == ["rafa's own"]

    store = InMemoryStore()
    Chronicarius(store).record_actum("ardian", reply("ardian's"))
    from chronica import ActaQuery

    assert _behind_the_lock(store, lambda: store.window("ardian", X, ActaQuery())) == [None]


# -- over HTTP, with real concurrent clients ------------------------------------------

ROUNDS = int(os.environ.get("CHRONICA_RACE_ROUNDS", "1000"))
# On PostgreSQL 1,000 rounds (2,000 until stop 54, when the two races became the build's
# longest leg's tail: 2.5 minutes of its wall). The leaks they are for are caught in far
# fewer: with the replay's owner check taken out, 100 rounds failed in 2 runs of 3 (stop
# 47) and 300 rounds in 5 s, 2 of 2 (stop 53); with the owner check taken out of the
# write's statements, 300 rounds failed in 8-10 s, 2 of 2 (stop 53). CHRONICA_RACE_ROUNDS
# runs more by hand.
# The HTTP races on SQLite: 200 rounds (race_rounds()). There a write holds the
# database's write lock from its first statement to its commit, its replay read included,
# so no delete or other owner's write lands between them.
# - The replay race: with the replay's owner check taken out (the leak of 0fb74df), 2,000
#   rounds on SQLite never failed, where 100 on PostgreSQL failed in 2 runs of 3
#   (measured, stop 47). tests/stores/test_replay_isolation.py pauses between the
#   statements and catches it on both databases; what this race still checks on SQLite
#   (no 500, a replay answers the key's own acta) needs no more rounds.
# - The write race: the lock makes a write one step, so what the race can meet is the
#   order of whole requests, which 200 rounds cover: with the owner check taken out of
#   SQLite's write (its upsert and its UPDATE), 200 rounds failed in 3 runs of 3 (6 of
#   ardian's acta in rafa's chronica each time), and so did 200 rounds against a check
#   made in a statement before the write's transaction (a check-then-write, the bug of
#   issue 20), 3 of 3 (measured, stop 49).
ROUNDS_ON_SQLITE = min(ROUNDS, 200)
GROUPS = 4  # groups of three clients racing at once, each on IDs of its own


def race_rounds() -> int:
    """The rounds of an HTTP race on this run's database (ROUNDS_ON_SQLITE says why
    fewer on SQLite)."""
    return ROUNDS_ON_SQLITE if connections["default"].vendor == "sqlite" else ROUNDS


class Client:
    """One keep-alive HTTP connection with a person's token."""

    def __init__(self, base: str, token: str) -> None:
        parts = urlsplit(base)
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        self.headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        payload = None if body is None else json.dumps(body)
        self.connection.request(method, path, payload, self.headers)
        response = self.connection.getresponse()
        raw = response.read()
        try:
            return response.status, (json.loads(raw) if raw else None)
        except ValueError:
            raise AssertionError(f"{method} {path}: {response.status} {raw[:300]!r}") from None


@pytest.fixture
def gunicorn(tmp_path: Path) -> Iterator[str]:
    """example_project under gunicorn with 16 threads, so that requests really run at
    once, on a store that is slow after each create (``tests.race_settings``)."""
    with _gunicorn(tmp_path, "tests.race_settings") as base:
        yield base


@pytest.fixture
def slow_statements(tmp_path: Path) -> Iterator[str]:
    """example_project under gunicorn with 16 threads, where a request may ask to wait
    between its statements (``tests.replay_race_settings``)."""
    with _gunicorn(tmp_path, "tests.replay_race_settings") as base:
        yield base


@contextlib.contextmanager
def _gunicorn(tmp_path: Path, settings: str) -> Iterator[str]:
    port = free_port()
    command = [
        PYTHON,
        "-m",
        "gunicorn",
        "example_project.wsgi:application",
        f"--bind=127.0.0.1:{port}",
        "--workers=1",
        "--threads=16",
        # The clients keep their connections between rounds, which may wait on each other.
        "--keep-alive=60",
    ]
    env = environment(DJANGO_SETTINGS_MODULE=settings, DJANGO_THROTTLE_USER="1000000/minute")
    with serving(command, port, tmp_path / "gunicorn.log", env=env) as base:
        yield base


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.once
def test_over_http_no_write_of_ardians_lands_in_rafas_chronicum(gunicorn, ardian, rafa):
    """Each round, at once: ardian's booking agent posts into a new X, ardian deletes X
    and rafa creates X (four groups of these three clients at once, 1,000 rounds; 200 on
    SQLite, ROUNDS_ON_SQLITE says why). Every
    actum ardian was told is stored (201) is in ardian's X or went with the delete;
    rafa's chronica hold nothing of ardian's."""
    from rest_framework.authtoken.models import Token

    tokens = {user.username: Token.objects.create(user=user).key for user in (ardian, rafa)}
    prefix = "/api/chronica/"
    told: list[tuple[str, str]] = []  # (chronicum, actum ID) ardian's writes were told
    answers: dict[str, collections.Counter[int]] = collections.defaultdict(collections.Counter)
    body = {"kind": "message", "actor_kind": "agent", "actor": "booking", "content": "Held."}

    def ardian_writes(client: Client, x: str) -> None:
        status, answer = client.call("POST", f"{prefix}{x}/acta/", body)
        answers["write"][status] += 1
        assert status in (201, 404), answer
        if status == 201:
            told.append((x, answer["id"]))

    def ardian_deletes(client: Client, x: str) -> None:
        status, answer = client.call("DELETE", f"{prefix}{x}/")
        answers["delete"][status] += 1
        assert status in (204, 404), answer

    def rafa_creates(client: Client, x: str) -> None:
        status, answer = client.call("POST", prefix, {"id": x})
        answers["create"][status] += 1
        assert status in (201, 409), answer

    # The delete and rafa's create start up to a few ms after the write, so that they
    # often meet it between its create and its append.
    steps = [
        (ardian_writes, tokens["ardian"], 0.0),
        (ardian_deletes, tokens["ardian"], 0.008),
        (rafa_creates, tokens["rafa"], 0.016),
    ]
    errors: list[BaseException] = []
    barriers: list[threading.Barrier] = []
    rounds_here = race_rounds()

    def racer(group: int, step: Callable[[Client, str], None], token: str, late: float) -> Any:
        """One of the three clients of a group: its part of each of the group's rounds."""
        start = barriers[group]

        def rounds() -> None:
            client, spread = Client(gunicorn, token), random.Random(f"{group}-{late}")
            try:
                for n in range(group, rounds_here, GROUPS):
                    start.wait(60)
                    time.sleep(spread.uniform(0, late))
                    step(client, f"race-{n}")
            except BaseException as exc:
                errors.append(exc)
                start.abort()

        return rounds

    threads = []
    for group in range(GROUPS):
        barriers.append(threading.Barrier(len(steps)))
        threads += [threading.Thread(target=racer(group, *step)) for step in steps]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(600)
    assert errors == [], errors[:1]

    from chronica import models

    rafas = set(models.Chronicum.objects.filter(owner_id=str(rafa.pk)).values_list("id", flat=True))
    stray = models.Actum.objects.filter(chronicum__owner_id=str(rafa.pk))
    assert list(stray.values_list("chronicum_id", "id")[:5]) == []
    kept = set(models.Actum.objects.values_list("chronicum_id", "id"))
    for x, actum_id in told:
        # Told stored: in ardian's X (written after the delete, or no delete came), or
        # gone with ardian's delete; never in rafa's.
        assert x not in rafas or (x, actum_id) not in kept
    # The three requests did race: every outcome of each happened.
    print(f"{rounds_here} rounds: {dict(answers)}")
    for call, outcomes in (("create", (201, 409)), ("delete", (204, 404)), ("write", (201,))):
        for status in outcomes:
            assert answers[call][status], answers


def _rounds(groups: list[list[Callable[[int], None]]], count: int = ROUNDS) -> None:
    """Run each group's steps at once, ``count`` rounds spread over the groups; fail
    with the first error."""
    errors: list[BaseException] = []
    barriers = [threading.Barrier(len(steps)) for steps in groups]

    def racer(group: int, step: Callable[[int], None]) -> Callable[[], None]:
        def rounds() -> None:
            try:
                for n in range(group, count, len(groups)):
                    barriers[group].wait(60)
                    step(n)
            except BaseException as exc:
                errors.append(exc)
                barriers[group].abort()

        return rounds

    threads = [
        threading.Thread(target=racer(group, step))
        for group, steps in enumerate(groups)
        for step in steps
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(600)
    failures = [e for e in errors if not isinstance(e, threading.BrokenBarrierError)]
    assert failures == [], failures[:1]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.once
def test_over_http_a_replay_never_answers_rafas_acta(slow_statements, ardian, rafa):
    """Each round: ardian's booking agent writes into X with a key (one actum, or a
    batch) and retries, the retry pausing 30 ms between its statements; meanwhile
    ardian deletes X and rafa writes into X (creating it) with the same key. No answer
    ardian gets holds anything of rafa's; a replay answers what the key stored for
    ardian; a retry is never a 500 nor an empty replay (four groups, 1,000 rounds; 200 on
    SQLite, ROUNDS_ON_SQLITE says why)."""
    from rest_framework.authtoken.models import Token

    tokens = {user.username: Token.objects.create(user=user).key for user in (ardian, rafa)}
    prefix = "/api/chronica/"
    answers: dict[str, collections.Counter[int]] = collections.defaultdict(collections.Counter)
    mine = {"kind": "message", "actor_kind": "agent", "actor": "booking", "content": "Held."}
    secret = {**mine, "actor": "rafa-agent", "content": "RAFA PRIVATE: my card ends 4242"}

    def post(c: Client, path: str, body: Any, **headers: str) -> tuple[int, Any]:
        saved = dict(c.headers)
        c.headers.update(headers)
        try:
            return c.call("POST", path, body)
        finally:
            c.headers = saved

    def group() -> list[Callable[[int], None]]:
        writer = Client(slow_statements, tokens["ardian"])
        deleter = Client(slow_statements, tokens["ardian"])
        other = Client(slow_statements, tokens["rafa"])
        written = threading.Semaphore(0)  # ardian's first write of each round is in

        def ardian_retries(n: int) -> None:
            path, key = f"{prefix}race-{n}/acta/", f"booking-reply-{n}"
            body: Any = mine if n % 2 else [mine, mine]
            status, first = post(writer, path, body, **{"Idempotency-Key": key})
            written.release()
            assert status == 201, first
            first_ids = {a["id"] for a in (first if isinstance(first, list) else [first])}
            retry = {"Idempotency-Key": key, "X-Test-Pause": "0.03"}
            status, answer = post(writer, path, body, **retry)
            answers["retry"][status] += 1
            assert status in (200, 201, 404), answer
            if status == 404:
                return
            got = answer if isinstance(answer, list) else [answer]
            assert len(got) == len(first_ids), (status, answer)
            for actum in got:
                assert actum["actor"] == "booking", answer
                assert "RAFA" not in actum["content"], answer
            if status == 200:
                assert {a["id"] for a in got} == first_ids, answer

        spread = random.Random(len(tokens))

        def rafa_takes_x(n: int) -> None:
            assert written.acquire(timeout=60)
            time.sleep(spread.uniform(0.0, 0.04))
            status, answer = deleter.call("DELETE", f"{prefix}race-{n}/")
            answers["delete"][status] += 1
            assert status in (204, 404), answer
            body: Any = secret if n % 2 else [secret, secret]
            path = f"{prefix}race-{n}/acta/"
            status, answer = post(other, path, body, **{"Idempotency-Key": f"booking-reply-{n}"})
            answers["rafa writes"][status] += 1
            assert status in (200, 201, 404), answer

        return [ardian_retries, rafa_takes_x]

    rounds = race_rounds()
    _rounds([group() for _ in range(GROUPS)], rounds)
    print(f"{rounds} rounds: {dict(answers)}")
    # The calls did race: the retry was a replay in some rounds and refused in others.
    assert answers["retry"][200], answers
    assert answers["retry"][404], answers
