"""17. What an attested write costs (issue 21): ``record_actum`` and a batch of ten
written as an agent's credential (the identity's rules, ``recorded_by`` stamped, the
credential checked in the write's statement) and as the owner in person, against the
same write with no identity (``recorded_by`` NULL). Each is one plain statement on
PostgreSQL (the PL/pgSQL write functions of migrations 0004 and 0006 were removed in
the one-architecture change).

The credential is issued once (``services.issue_credential``) and its
``AgentIdentity`` taken with ``authenticate_credential``: the secret's check at
sign-in (one query and a hash, once per request in the API) is not part of the
write; the write checks in its statement that the credential is still valid.
Interleaved rounds on one connection; the ratio is the median of the round-by-round
ratios. With commits that do not wait for the disk (what is left is chronica's own
cost) and with durable ones (what a project runs).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable

from chronica import ActorKind, Actum, ActumKind, ChronicumNotFound, services
from chronica.services import AgentIdentity, Chronicarius, OwnerIdentity
from chronica.stores.db import DjangoStore

from .database import OWNER
from .report import DEFAULTS, NOWAIT, Row
from .timing import median, paired_ratio, rounds

CASE = "17 attested"


def _booking() -> AgentIdentity:
    """A real credential of ardian's booking agent: the write checks it in the database."""
    issued = services.issue_credential(OWNER, "booking")
    return services.authenticate_credential(issued.secret)


def _held(chronicum_id: str, n: int) -> Actum:
    return Actum(
        chronicum_id=chronicum_id,
        kind=ActumKind.MESSAGE,
        actor_kind=ActorKind.AGENT,
        actor="booking",
        content=f"Held: Rumah Teduh, 7pm ({n}).",
    )


def attested(*, ops: int, n_rounds: int) -> list[Row]:
    rows: list[Row] = []
    count = itertools.count()
    booking = _booking()
    for alias, label in (("nowait", f"{DEFAULTS}, {NOWAIT}"), ("default", DEFAULTS)):
        plain = Chronicarius(DjangoStore(using=alias))
        writers = {
            "no identity": plain,
            "agent credential": plain.acting_as(booking),
            "owner in person": plain.acting_as(OwnerIdentity(OWNER)),
        }
        for batch in (1, 10):
            sides: dict[str, Callable[[], object]] = {}
            for name, chronicarius in writers.items():
                chronicum_id = f"bench-attest-{alias}-{batch}-{name.split()[0]}"
                with contextlib.suppress(ChronicumNotFound):
                    plain.delete_chronicum(OWNER, chronicum_id)
                sides[name] = _writer(chronicarius, chronicum_id, batch, count)
            # A batch is ten acta: a tenth of the calls keeps the rounds alike.
            got = rounds(sides, ops=max(ops // batch, 10), rounds=n_rounds, warmup=20)
            unit = "batches/s" if batch > 1 else "ops/s"
            what = "record_actum" if batch == 1 else "record_acta (10)"
            base = got["no identity"]
            for name in ("agent credential", "owner in person"):
                ratio = paired_ratio(got[name], base)
                rows.append(
                    Row(
                        CASE,
                        f"{what} as {name}, {label}",
                        f"{median(got[name]):,.0f} {unit}",
                        f"no identity: {median(base):,.0f} {unit}",
                        f"{ratio:.2f}",
                    )
                )
    return rows


def _writer(
    chronicarius: Chronicarius, chronicum_id: str, batch: int, count: itertools.count[int]
) -> Callable[[], object]:
    if batch == 1:
        return lambda: chronicarius.record_actum(OWNER, _held(chronicum_id, next(count)))
    return lambda: chronicarius.record_acta(
        OWNER, [_held(chronicum_id, next(count)) for _ in range(batch)]
    )
