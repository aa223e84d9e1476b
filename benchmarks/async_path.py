"""13. What the asyncio face costs: ``await services.aget_acta(...)`` against the same
``services.get_acta(...)`` called directly, on one event loop.

Every ``a*`` call of chronica is the sync call run by ``sync_to_async`` in Django's
one shared worker thread (``chronica.services.base.async_twin``). This measures the
hop that adds to a window of 20 acta of a 1,000-acta chronicum (the sessions of
case 3), in alternating rounds of one process; the ratio is the async call's time
over the sync call's (lower is better).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from chronica import services

from .database import OWNER
from .timing import median, paired_ratio

if TYPE_CHECKING:
    from .report import Row

CHRONICUM = "bench-1k"


def async_path(*, ops: int = 100, n_rounds: int = 11) -> list[Row]:
    from .report import Row, rate

    async def sync_side() -> float:
        start = time.perf_counter()
        for _ in range(ops):
            services.get_acta(OWNER, CHRONICUM, last_n=20)
        return ops / (time.perf_counter() - start)

    async def async_side() -> float:
        start = time.perf_counter()
        for _ in range(ops):
            await services.aget_acta(OWNER, CHRONICUM, last_n=20)
        return ops / (time.perf_counter() - start)

    async def run() -> dict[str, list[float]]:
        sides = {"sync": sync_side, "async": async_side}
        for side in sides.values():  # connections open (one per thread), statements warm
            await side()
        got: dict[str, list[float]] = {name: [] for name in sides}
        for r in range(n_rounds):
            for name in list(sides) if r % 2 == 0 else list(sides)[::-1]:
                got[name].append(await sides[name]())
        return got

    # The sync side runs on the loop's thread, which Django refuses unless told: the
    # measure is the hop, not the guard.
    import os

    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        got = asyncio.run(run())
    finally:
        del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]
    ratio = paired_ratio(got["sync"], got["async"])  # async time / sync time
    return [
        Row(
            "13 asyncio",
            "await aget_acta(last_n=20), 1k acta, one task; baseline: get_acta called directly",
            rate(median(got["async"])),
            "get_acta: " + rate(median(got["sync"])),
            f"{ratio:.2f}x the time",
        )
    ]


if __name__ == "__main__":
    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    import django

    django.setup()
    from .database import ensure_database
    from .report import table

    ensure_database()
    print(table(async_path()))
