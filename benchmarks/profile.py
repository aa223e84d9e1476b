"""``python -m benchmarks --profile record|window|batch|budget|http-window|http-write``:
where chronica's side spends its time.

pyinstrument samples the wall clock, so a call waiting on the database shows as such;
for the CPU alone, run ``py-spy record --idle=false -- python -m benchmarks ...``.
The http-* profiles are of case 18's requests through DRF's test client (they make
case 18's chronica if missing; the others need the data of one PostgreSQL run).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from pyinstrument import Profiler

from chronica import ActumKind, services

from .database import OWNER, human_message


def _http(case: str) -> Callable[[], object]:
    from . import http

    http.prepare()
    return http.operations(http.client())[case.replace("http-", "") + " chronica"]


def profile(case: str, ops: int = 1000) -> str:
    """The text profile of ``ops`` calls of one case, after a warm-up."""
    count = itertools.count()
    request = _http(case) if case.startswith("http-") else None

    def op() -> object:
        if request is not None:
            return request()
        if case == "record":
            return services.record_actum(OWNER, human_message("bench-record-chronica", next(count)))
        if case == "batch":
            acta = [human_message("bench-batch-acta", next(count)) for _ in range(10)]
            return services.record_acta(OWNER, acta)
        if case == "budget":
            return services.get_acta(OWNER, "bench-1m", max_tokens=8000)
        return services.get_acta(OWNER, "bench-10k", last_n=20, kinds=[ActumKind.MESSAGE])

    for _ in range(200):
        op()
    profiler = Profiler(interval=0.0001)
    with profiler:
        for _ in range(ops):
            op()
    return profiler.output_text(unicode=True, color=False)
