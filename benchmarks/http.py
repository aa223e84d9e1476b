"""18. The user's HTTP paths, in process: ``GET /api/chronica/<id>/acta/?last_n=20``
and ``POST /api/chronica/<id>/acta/`` through DRF's ``APIClient`` against the real
routes (``chronica.api.urls``), each against a "DRF floor": a plain ``APIView`` with the
same authentication and permission classes that runs one SQL statement on Django's
connection (the owner checked in it) and answers with DRF's ``Response``.

- window: the newest 20 acta of a chronicum of 1,000 (the columns the API answers),
  oldest first, as a list of dicts; chronica: its window route, serializer, byte
  budget and renderer.
- write: the same work as chronica's, with the guarantees of the library floor
  (``benchmarks/floor.py``): the owner's chronicum row locked and bumped to the write's
  moment before the actum draws its ``seq``, then the actum inserted, and the stored actum
  as the answer (201, its fields as chronica's wire has them). On PostgreSQL one
  statement (``WITH c AS (UPDATE ... RETURNING) INSERT ... RETURNING``); on SQLite, which
  has no data-modifying CTE, the UPDATE and the INSERT in one transaction. chronica adds
  validation, the token count and the chronicum created if missing.

Both sides are signed in with ``APIClient.force_authenticate`` (a user whose ``pk`` is
the owner, no database), so the statements counted are the path's own; the project's
own authentication (a session, a token) would add its lookups to both sides alike.
Works on PostgreSQL and on SQLite (``CHRONICA_BENCH_DB=sqlite``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import secrets
from collections.abc import Callable, Sequence
from typing import Any, cast

from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.test import APIClient
from rest_framework.views import APIView

from chronica import ActorKind, Actum, ActumKind, ChronicumNotFound, services
from chronica.api.authentication import AgentCredentialAuthentication

OWNER = "ardian"
CASE = "18 http"
WINDOW_ID = "bench-http-1k"
WRITES = {"chronica": "bench-http-write-chronica", "floor": "bench-http-write-floor"}
SIZE = 1_000

_COLUMNS = (
    "id, chronicum_id, kind, actor_kind, actor, content, at, call_id, data, recorded_by,"
    " compacts, redacted_at, redacted_reason"
)
_NAMES = [c.strip() for c in _COLUMNS.split(",")]


def _window_sql() -> str:
    # PostgreSQL: the chronicum named by "= ANY(ARRAY[...])" keeps the backward walk of
    # (chronicum_id, seq) the only plan (as chronica's dialect does); SQLite: plain.
    chronicum_is = (
        "chronicum_id = ANY(ARRAY[%s])"
        if connection.vendor == "postgresql"
        else "chronicum_id = %s"
    )
    return (
        f"SELECT {_COLUMNS} FROM acta WHERE {chronicum_is}"
        " AND EXISTS (SELECT 1 FROM chronica WHERE id = %s AND owner_id = %s)"
        " ORDER BY chronicum_id DESC, seq DESC LIMIT %s"
    )


_RETURNED = "id, chronicum_id, kind, actor_kind, actor, content, at, call_id, data, recorded_by"
_INSERTED = (
    "INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at, call_id,"
    " data, tokens, idempotency_key, recorded_by)"
)


# PostgreSQL: the lock and bump of the owner's row, then the insert, one statement.
_WRITE_SQL = (
    "WITH c AS (UPDATE chronica SET last_activity_at = clock_timestamp()"
    " WHERE id = %s AND owner_id = %s RETURNING id, last_activity_at) "
    + _INSERTED
    + " SELECT %s, c.id, %s, %s, %s, %s, c.last_activity_at, '', NULL, %s, NULL, 'owner'"
    f" FROM c RETURNING {_RETURNED}"
)
_RETURNED_NAMES = _RETURNED.split(", ")


# SQLite: the same two steps in one transaction (its write lock is the database's).
_BUMP_SQL = "UPDATE chronica SET last_activity_at = %s WHERE id = %s AND owner_id = %s"
_INSERT_SQL = (
    _INSERTED
    + " VALUES (%s, %s, %s, %s, %s, %s, %s, '', NULL, %s, NULL, 'owner')"
    + f" RETURNING {_RETURNED}"
)


class FloorActa(APIView):
    """The floor: chronica's authentication and permission classes, one statement."""

    authentication_classes = [
        AgentCredentialAuthentication,
        *cast(Sequence[type[BaseAuthentication]], api_settings.DEFAULT_AUTHENTICATION_CLASSES),
    ]
    permission_classes = [IsAuthenticated]

    def get(self, request: Request, chronicum_id: str) -> Response:
        last_n = int(request.query_params.get("last_n", "20"))
        owner = str(request.user.pk)
        with connection.cursor() as cursor:
            cursor.execute(_window_sql(), [chronicum_id, chronicum_id, owner, last_n])
            rows = cursor.fetchall()
        acta = [dict(zip(_NAMES, row, strict=True)) for row in reversed(rows)]
        for actum in acta:
            if actum["data"] is not None and isinstance(actum["data"], str):
                actum["data"] = json.loads(actum["data"])
            # The wire's "redacted": null, or when and why (as chronica answers it).
            at, reason = actum.pop("redacted_at"), actum.pop("redacted_reason")
            actum["redacted"] = None if at is None else {"at": at, "reason": reason}
        return Response(acta)

    def post(self, request: Request, chronicum_id: str) -> Response:
        body = cast(dict[str, Any], request.data)
        content = str(body["content"])
        tokens = 4 + (2 * len(content.encode()) + 6) // 7  # the default counter's formula
        actum = [secrets.token_hex(16), body["kind"], body["actor_kind"], body["actor"], content]
        owner = str(request.user.pk)
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(_WRITE_SQL, [chronicum_id, owner, *actum, tokens])
                row = cursor.fetchone()
        else:
            now = dt.datetime.now(dt.UTC)
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(_BUMP_SQL, [now, chronicum_id, owner])
                row = None
                if cursor.rowcount == 1:
                    cursor.execute(_INSERT_SQL, [actum[0], chronicum_id, *actum[1:], now, tokens])
                    row = cursor.fetchone()
        if row is None:
            return Response({"detail": "Not found."}, status=404)
        stored = dict(zip(_RETURNED_NAMES, row, strict=True))
        stored.update(redacted=None, compacts="")
        return Response(stored, status=201)


class BenchUser:
    """A signed-in user whose owner ID (``str(pk)``, chronica's default) is ardian."""

    is_authenticated = True
    is_anonymous = False
    is_active = True
    pk = OWNER
    id = OWNER
    username = OWNER


def _actum(chronicum_id: str, n: int) -> Actum:
    return Actum(
        chronicum_id=chronicum_id,
        kind=ActumKind.MESSAGE if n % 4 == 0 else ActumKind.THOUGHT,
        actor_kind=ActorKind.HUMAN if n % 4 == 0 else ActorKind.AGENT,
        actor="ardian" if n % 4 == 0 else "booking",
        content=f"dinner on friday, turn {n}: " + "table for four at eight? " * 8,
    )


def prepare() -> None:
    """ardian's chronicum of SIZE acta (written through chronica, batches of 100), and
    one empty chronicum for each side's writes; made once, kept between runs."""
    try:
        found = len(services.get_acta(OWNER, WINDOW_ID, last_n=SIZE + 1))
    except ChronicumNotFound:
        found = -1
    if found != SIZE:
        with contextlib.suppress(ChronicumNotFound):
            services.delete_chronicum(OWNER, WINDOW_ID)
        for start in range(0, SIZE, 100):
            services.record_acta(OWNER, [_actum(WINDOW_ID, n) for n in range(start, start + 100)])
    for chronicum_id in WRITES.values():
        with contextlib.suppress(ChronicumNotFound):
            services.delete_chronicum(OWNER, chronicum_id)
        services.create_chronicum(OWNER, chronicum_id)


def client() -> APIClient:
    signed_in = APIClient()
    signed_in.force_authenticate(user=BenchUser())  # type: ignore[arg-type]
    return signed_in


def _body(n: int) -> dict[str, str]:
    return {
        "kind": "message",
        "actor_kind": "human",
        "actor": "ardian",
        "content": f"table for four at eight? ({n})",
    }


def operations(api: APIClient) -> dict[str, Callable[[], object]]:
    """The four requests, each checked for its status on every call."""
    count = iter(range(10**12))

    def call(method: str, path: str, status: int, data: Any = None) -> Callable[[], object]:
        send = getattr(api, method)

        def op() -> object:
            kwargs = {"format": "json"} if data is None else {"data": data(), "format": "json"}
            response = send(path, **kwargs)
            if response.status_code != status:
                raise SystemExit(
                    f"{method.upper()} {path}: {response.status_code} {response.content[:300]!r}"
                )
            return response

        return op

    def body() -> dict[str, str]:
        return _body(next(count))

    return {
        "window chronica": call("get", f"/api/chronica/{WINDOW_ID}/acta/?last_n=20", 200),
        "window floor": call("get", f"/floor/{WINDOW_ID}/acta/?last_n=20", 200),
        "write chronica": call("post", f"/api/chronica/{WRITES['chronica']}/acta/", 201, body),
        "write floor": call("post", f"/floor/{WRITES['floor']}/acta/", 201, body),
    }


def _statements(op: Callable[[], object]) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        op()
    return [query["sql"] for query in captured.captured_queries]


def run(*, quick: bool = False) -> list[Any]:
    from .report import Row, met
    from .timing import median, paired_ratio, rounds

    prepare()
    api = client()
    ops = operations(api)
    # The two windows must answer the same acta.
    ours, theirs = ops["window chronica"]().json(), ops["window floor"]().json()  # type: ignore[attr-defined]
    if [a["id"] for a in ours] != [a["id"] for a in theirs] or len(ours) != 20:
        raise SystemExit("the DRF floor and chronica disagree on the window: the floor is wrong")
    if set(ours[0]) != set(theirs[0]):
        raise SystemExit(f"the floor's fields differ: {sorted(ours[0])} != {sorted(theirs[0])}")

    vendor = connection.vendor
    counts = {}
    for name, op in ops.items():
        statements = _statements(op)
        counts[name] = len(statements)
        print(f"[18 http, {vendor}] {name}: {len(statements)} statement(s)")
        for sql in statements:
            print("    " + " ".join(sql.split())[:240])

    n_ops, n_rounds = (50, 15) if quick else (100, 61)
    rows = []
    for what, target, label in (
        ("window", 0.70, "GET /api/chronica/<id>/acta/?last_n=20, 1k acta"),
        ("write", 0.80, "POST /api/chronica/<id>/acta/, one actum"),
    ):
        sides = {"chronica": ops[f"{what} chronica"], "floor": ops[f"{what} floor"]}
        got = rounds(sides, ops=n_ops, rounds=n_rounds, warmup=30)
        # floor time / chronica time = chronica ops/s / floor ops/s
        ratio = paired_ratio(got["chronica"], got["floor"])
        ours_us, floor_us = 1e6 / median(got["chronica"]), 1e6 / median(got["floor"])
        rows.append(
            Row(
                CASE,
                f"{label}, {vendor}; ratio: floor time / chronica time",
                f"{ours_us:,.0f} µs",
                f"DRF floor: {floor_us:,.0f} µs",
                f"{ratio:.2f}",
                f">= {target:.2f}",
                met(ratio >= target),
            )
        )
        rows.append(
            Row(
                CASE,
                f"{label}, {vendor}: SQL statements a request",
                str(counts[f"{what} chronica"]),
                f"DRF floor: {counts[f'{what} floor']}",
            )
        )
    return rows
