"""Google ADK sessions: ChronicaSessionService against ADK's DatabaseSessionService.

``python -m benchmarks.google_adk [--quick] [--no-load]``, or the ``google-adk`` case of
``python -m benchmarks``.

Both services keep the same sessions on the same PostgreSQL database: chronica's
DjangoStore on the benchmark database, ADK's ``DatabaseSessionService`` on it too
(SQLAlchemy with psycopg's async driver, its own tables ``sessions``, ``events``,
``app_states`` and ``user_states``). Each side gets, as its own ``append_event`` would
have written them, a session of 100,000 events and one of 1,000 (five-event turns: the
question, a function call, its response, a thought, the answer; a state delta on each
answer), and a user with 10,000 sessions. Then, from one asyncio loop, in interleaved
rounds (:mod:`benchmarks.timing`):

* ``get_session(num_recent_events=20)`` on the 100,000-event session;
* ``list_sessions`` of the user with 10,000 sessions;
* ``append_event`` of one event (with a state delta) into a session;
* the growth of chronica's ``get_session(num_recent_events=20)`` from 1,000 to 100,000.

Targets: at least 5 times ADK's speed on both reads, appends no slower than ADK's,
growth at most 1.3.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

APP = "bench-adk"
OWNER = "ardian"
LISTER = "rafa"
LARGE, SMALL, LISTED = 100_000, 1_000, 10_000
BIG, LITTLE, WRITES = "adk-100k", "adk-1k", "adk-writes"
START = 1_735_689_600.0  # 2025-01-01


def turn(n: int) -> list[Any]:
    """The five events of one turn of the dinner-friday conversation."""
    from google.adk.events.event import Event
    from google.adk.events.event_actions import EventActions
    from google.genai import types

    call = f"call-{n:08d}"
    t = START + 5 * n

    def event(k: int, author: str, part: types.Part, **extra: Any) -> Event:
        role = "user" if author == "user" or part.function_response else "model"
        return Event(
            id=f"event-{n:08d}-{k}",
            invocation_id=f"inv-{n:08d}",
            author=author,
            timestamp=t + k,
            content=types.Content(role=role, parts=[part]),
            **extra,
        )

    return [
        event(0, "user", types.Part(text=f"Is there a quiet table for four on Friday? ({n})")),
        event(
            1,
            "finder",
            types.Part(
                function_call=types.FunctionCall(
                    id=call, name="search", args={"area": "Kemang", "party": 4}
                )
            ),
        ),
        event(
            2,
            "finder",
            types.Part(
                function_response=types.FunctionResponse(
                    id=call, name="search", response={"tables": ["Rumah Teduh", "Kayu Manis"]}
                )
            ),
        ),
        event(3, "finder", types.Part(text="Two quiet tables; ask which.", thought=True)),
        event(
            4,
            "finder",
            types.Part(text="Rumah Teduh and Kayu Manis both have a quiet table for four at 7pm."),
            actions=EventActions(state_delta={"turn": n, "user:last_area": "Kemang"}),
        ),
    ]


def events(count: int) -> list[Any]:
    return [e for n in range(count // 5) for e in turn(n)]


def _url() -> str:
    from .database import sqlalchemy_url

    return sqlalchemy_url()


async def _load_chronica(session_id: str, count: int) -> None:
    """The session as ChronicaSessionService's append_event writes it, in batches."""
    import contextlib

    from chronica import ChronicumNotFound, services
    from chronica.integrations.google_adk import (
        ChronicaSessionService,
        actum_of,
        chronicum_id,
        namespace,
    )
    from chronica.values import StateChange

    service = ChronicaSessionService()
    cid = chronicum_id(APP, OWNER, session_id)
    with contextlib.suppress(ChronicumNotFound):
        await services.adelete_chronicum(OWNER, cid)
    await service.create_session(app_name=APP, user_id=OWNER, session_id=session_id)
    loaded = events(count)
    for start in range(0, len(loaded), 1000):
        batch = loaded[start : start + 1000]
        acta = [
            actum_of(e, cid, OWNER, e.model_dump(exclude_none=True, mode="json")) for e in batch
        ]
        await services.arecord_acta(OWNER, acta)
    last = loaded[-1]
    await services.aupdate_state(
        OWNER,
        cid,
        [
            StateChange(
                namespace=namespace(APP),
                set={"updated": last.timestamp, "last_event": last.id},
            ),
            StateChange(namespace=namespace(APP), path=("state",), set={"turn": count // 5 - 1}),
        ],
    )


async def _load_adk(service: Any, session_id: str, count: int) -> None:
    """The session as DatabaseSessionService's append_event writes it, in batches."""
    import datetime as dt

    await service.delete_session(app_name=APP, user_id=OWNER, session_id=session_id)
    session = await service.create_session(app_name=APP, user_id=OWNER, session_id=session_id)
    schema = service._get_schema_classes()
    loaded = events(count)
    for start in range(0, len(loaded), 1000):
        async with service.database_session_factory() as sql:
            sql.add_all(
                [schema.StorageEvent.from_event(session, e) for e in loaded[start : start + 1000]]
            )
            await sql.commit()
    last = loaded[-1]
    async with service.database_session_factory() as sql:
        stored = await sql.get(schema.StorageSession, (APP, OWNER, session_id))
        stored.state = {"turn": count // 5 - 1}
        stored.update_time = dt.datetime.fromtimestamp(last.timestamp, dt.UTC).replace(tzinfo=None)
        await sql.commit()


async def _load_listing(adk: Any) -> None:
    """A user's 10,000 sessions on each side, as each create_session writes them (in
    bulk: one create is a transaction of its own on both sides, and the point here
    is to list them)."""
    import datetime as dt

    from asgiref.sync import sync_to_async

    from chronica import models
    from chronica.integrations.google_adk import chronicum_id, namespace

    def ours() -> None:
        rows = models.Chronicum.objects
        rows.filter(namespace=namespace(APP), owner_id=LISTER).delete()
        now = dt.datetime.fromtimestamp(START, dt.UTC)
        rows.bulk_create(
            [
                models.Chronicum(
                    id=chronicum_id(APP, LISTER, f"s{n:05d}"),
                    owner_id=LISTER,
                    started_at=now + dt.timedelta(seconds=n),
                    last_activity_at=now + dt.timedelta(seconds=n),
                    namespace=namespace(APP),
                    state={
                        "session_id": f"s{n:05d}",
                        "state": _listed_state(n),
                        "updated": START + n,
                        "last_event": "",
                    },
                )
                for n in range(LISTED)
            ],
            batch_size=1000,
        )

    await sync_to_async(ours)()
    schema = adk._get_schema_classes()
    from sqlalchemy import delete

    async with adk.database_session_factory() as sql:
        await sql.execute(
            delete(schema.StorageSession).where(
                schema.StorageSession.app_name == APP,
                schema.StorageSession.user_id == LISTER,
            )
        )
        sql.add_all(
            [
                schema.StorageSession(
                    app_name=APP,
                    user_id=LISTER,
                    id=f"s{n:05d}",
                    state=_listed_state(n),
                    create_time=dt.datetime.fromtimestamp(START + n, dt.UTC).replace(tzinfo=None),
                    update_time=dt.datetime.fromtimestamp(START + n, dt.UTC).replace(tzinfo=None),
                )
                for n in range(LISTED)
            ]
        )
        await sql.commit()


def _listed_state(n: int) -> dict[str, Any]:
    return {"party": 4, "area": "Kemang", "n": n}


def run(*, quick: bool = False, load: bool = True) -> list[Any]:
    """Load (unless ``load`` is false), measure, and return the rows of the table."""
    from django.db import connection
    from google.adk.sessions.base_session_service import GetSessionConfig
    from google.adk.sessions.database_session_service import DatabaseSessionService

    from chronica.integrations.google_adk import ChronicaSessionService

    from .report import Row, met, rate
    from .timing import median, paired_ratio, rounds

    loop = asyncio.new_event_loop()

    def sync(make: Callable[[], Awaitable[object]]) -> Callable[[], object]:
        return lambda: loop.run_until_complete(make())

    chronica = ChronicaSessionService()
    adk = DatabaseSessionService(_url())
    recent = GetSessionConfig(num_recent_events=20)
    try:
        if load:
            began = time.monotonic()
            print(
                f"loading ADK sessions of {LARGE:,} and {SMALL:,} events and {LISTED:,}"
                " sessions of one user into both services ...",
                flush=True,
            )
            for fill in (
                _load_chronica(BIG, LARGE),
                _load_chronica(LITTLE, SMALL),
                _load_adk(adk, BIG, LARGE),
                _load_listing(adk),
            ):
                loop.run_until_complete(fill)
            with connection.cursor() as cursor:
                for table in ("acta", "chronica", "events", "sessions"):
                    cursor.execute(f"ANALYZE {table}")
            print(f"loaded in {time.monotonic() - began:.0f} s", flush=True)
        writers = {}
        for name, service in (("chronica", chronica), ("adk", adk)):
            loop.run_until_complete(
                service.delete_session(app_name=APP, user_id=OWNER, session_id=WRITES)
            )
            writers[name] = loop.run_until_complete(
                service.create_session(app_name=APP, user_id=OWNER, session_id=WRITES)
            )

        def read(service: Any, session_id: str) -> Callable[[], Awaitable[Any]]:
            return lambda: service.get_session(
                app_name=APP, user_id=OWNER, session_id=session_id, config=recent
            )

        # Both must return the same 20 events and state, or the race means nothing.
        ours, theirs = (loop.run_until_complete(read(s, BIG)()) for s in (chronica, adk))
        if ours is None or theirs is None or len(ours.events) != 20:
            raise SystemExit(f"the {BIG} sessions are not loaded: run without --no-load")
        if ours.events != theirs.events or ours.state != theirs.state:
            raise SystemExit("the two services disagree on the last 20 events: reload them")
        listed = [
            loop.run_until_complete(s.list_sessions(app_name=APP, user_id=LISTER))
            for s in (chronica, adk)
        ]
        dumped = [[s.model_dump() for s in x.sessions] for x in listed]  # not the private marker
        if [len(x) for x in dumped] != [LISTED, LISTED] or dumped[0] != dumped[1]:
            raise SystemExit("the two services disagree on the listing: reload them")

        n_rounds = 5 if quick else 21
        reads = rounds(
            {"chronica": sync(read(chronica, BIG)), "adk": sync(read(adk, BIG))},
            ops=20,
            rounds=n_rounds,
            warmup=10,
        )
        lists = rounds(
            {
                name: sync(lambda s=service: s.list_sessions(app_name=APP, user_id=LISTER))
                for name, service in (("chronica", chronica), ("adk", adk))
            },
            ops=2,
            rounds=n_rounds,
            warmup=1,
        )
        # Events of turns after every earlier run's (their timestamps now): a run on
        # reused sessions (--no-load) never appends an event older than the last one.
        count = iter(range(int(time.time() - START) // 5, 10**12))

        def append(name: str, service: Any) -> Callable[[], object]:
            return sync(lambda: service.append_event(writers[name], turn(next(count))[4]))

        appends = rounds(
            {"chronica": append("chronica", chronica), "adk": append("adk", adk)},
            ops=20,
            rounds=n_rounds,
            warmup=10,
        )
        growth = rounds(
            {"1k": sync(read(chronica, LITTLE)), "100k": sync(read(chronica, BIG))},
            ops=20,
            rounds=n_rounds,
            warmup=10,
        )
    finally:
        loop.run_until_complete(adk.close())
        loop.close()

    case = "15 google-adk"
    rows = []
    for what, got, target in (
        ("get_session(num_recent_events=20), 100k events", reads, 5.0),
        (f"list_sessions of a user with {LISTED:,} sessions", lists, 5.0),
        ("append_event, one event with a state delta", appends, 1.0),
    ):
        ratio = paired_ratio(got["chronica"], got["adk"])
        rows.append(
            Row(
                case,
                f"{what}, vs DatabaseSessionService, PostgreSQL",
                rate(median(got["chronica"])),
                rate(median(got["adk"])),
                f"{ratio:.2f}",
                f">= {target:.2f}",
                met(ratio >= target),
            )
        )
    for size in ("1k", "100k"):
        latency = 1e6 / median(growth[size])
        rows.append(
            Row(case, f"get_session(num_recent_events=20), {size} events", f"{latency:,.0f} µs")
        )
    ratio = paired_ratio(growth["1k"], growth["100k"])  # latency 100k / latency 1k
    rows.append(
        Row(
            case,
            "latency 100k / 1k events",
            ratio=f"{ratio:.2f}",
            target="<= 1.30",
            met=met(ratio <= 1.3),
        )
    )
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.google_adk")
    parser.add_argument("--quick", action="store_true", help="fewer rounds, for trying things")
    parser.add_argument("--no-load", action="store_true", help="reuse the loaded sessions")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    import django

    django.setup()
    from .database import ensure_database, machine
    from .report import table

    began = time.monotonic()
    name = ensure_database()
    rows = run(quick=args.quick, load=not args.no_load)
    print(f"google-adk sessions on {name}, {time.monotonic() - began:.0f} s")
    print(f"machine: {machine()}")
    print("the baseline column is ADK's DatabaseSessionService on the same PostgreSQL\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
