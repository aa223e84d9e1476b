"""6. Batches: ``record_acta`` with 10 acta against 10 ``record_actum`` calls and against
the psycopg floor recording the same 10 acta by hand in one statement."""

from __future__ import annotations

import itertools
from collections.abc import Callable

from django.conf import settings

from chronica import Actum, services
from chronica.services import Chronicarius
from chronica.stores.db import DjangoStore

from .database import OWNER, human_message
from .floor import Floor
from .report import DEFAULTS, NOWAIT, PREPARED, Row, met
from .timing import median, paired_ratio, rounds

SIZE = 10


def batch(floor: Floor, conninfo: str, *, ops: int, n_rounds: int) -> list[Row]:
    """Acta per second of each side; one operation is always 10 acta. Durable commits
    first, then commits that do not wait for the disk (chronica's own cost)."""
    count = itertools.count()

    def ten(chronicum_id: str) -> list[Actum]:
        return [human_message(chronicum_id, next(count)) for _ in range(SIZE)]

    def batch_op(chronicarius: Chronicarius, chronicum_id: str) -> Callable[[], object]:
        return lambda: chronicarius.record_acta(OWNER, ten(chronicum_id))

    def single_op(chronicarius: Chronicarius, chronicum_id: str) -> Callable[[], object]:
        def op() -> object:
            for actum in ten(chronicum_id):
                chronicarius.record_actum(OWNER, actum)
            return None

        return op

    def floor_op(floor: Floor, chronicum_id: str) -> Callable[[], object]:
        def op() -> object:
            acta = [("message", "human", "ardian", a.content) for a in ten(chronicum_id)]
            return floor.record_batch(OWNER, chronicum_id, acta)

        return op

    def on(using: str | None) -> Chronicarius:
        return services.get_chronicarius() if using is None else Chronicarius(DjangoStore(using))

    # 10 single calls take about as long as 10 batches: fewer of them per round.
    def per_round(sides: dict[str, Callable[[], object]]) -> dict[str, int]:
        return {name: max(2, ops // 5) if name == "single" else ops // 2 for name in sides}

    durable = {
        "acta": batch_op(on(None), "bench-batch-acta"),
        "prepared": batch_op(on("prepared"), "bench-batch-prepared"),
        "single": single_op(on(None), "bench-batch-single"),
        "floor": floor_op(floor, "bench-batch-floor"),
    }
    got = rounds(durable, ops=per_round(durable), rounds=n_rounds, warmup=per_round(durable))
    floor_nowait = Floor(conninfo, options=settings.NOWAIT)
    try:
        nowait = {
            "acta": batch_op(on("nowait"), "bench-batch-acta-nowait"),
            "prepared": batch_op(on("prepared-nowait"), "bench-batch-prepared-nowait"),
            "single": single_op(on("nowait"), "bench-batch-single-nowait"),
            "floor": floor_op(floor_nowait, "bench-batch-floor-nowait"),
        }
        fast = rounds(nowait, ops=per_round(nowait), rounds=n_rounds, warmup=per_round(nowait))
    finally:
        floor_nowait.close()

    rows = []
    for results, how in ((got, ""), (fast, f", {NOWAIT}")):

        def acta_s(name: str, results: dict[str, list[float]] = results) -> str:
            return f"{median(results[name]) * SIZE:,.0f} acta/s"

        vs_single = paired_ratio(results["acta"], results["single"])
        vs_floor = paired_ratio(results["acta"], results["floor"])
        prepared_vs_floor = paired_ratio(results["prepared"], results["floor"])
        rows += [
            Row(
                "6 batch",
                f"record_acta({SIZE} acta), {DEFAULTS}{how}, vs {SIZE} record_actum calls",
                acta_s("acta"),
                f"{SIZE} calls: {acta_s('single')}",
                f"{vs_single:.2f}",
                "" if how else ">= 5",
                "" if how else met(vs_single >= 5),
            ),
            Row(
                "6 batch",
                f"record_acta({SIZE} acta), {DEFAULTS}{how}, vs the floor's batch",
                acta_s("acta"),
                f"floor: {acta_s('floor')}",
                f"{vs_floor:.2f}",
                "" if how else ">= 0.80",
                "" if how else met(vs_floor >= 0.8),
            ),
            Row(
                "6 batch",
                f"record_acta({SIZE} acta), {PREPARED}{how}, vs the floor's batch",
                acta_s("prepared"),
                f"floor: {acta_s('floor')}",
                f"{prepared_vs_floor:.2f}",
            ),
        ]
    return rows
