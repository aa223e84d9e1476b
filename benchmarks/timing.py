"""Interleaved rounds: every side runs in every round, taking turns at going first."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping


def rounds(
    sides: Mapping[str, Callable[[], object]], *, ops: int, rounds: int, warmup: int
) -> dict[str, list[float]]:
    """Operations per second of each side in each round.

    The sides run one after the other inside a round and the order rotates from
    round to round, so a slow moment of the machine lands on all of them alike.
    """
    names = list(sides)
    for name in names:
        for _ in range(warmup):
            sides[name]()
    result: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            op = sides[name]
            start = time.perf_counter()
            for _ in range(ops):
                op()
            result[name].append(ops / (time.perf_counter() - start))
    return result


def median(values: list[float]) -> float:
    """The median: one noisy round cannot move it."""
    return statistics.median(values)


def paired_ratio(top: list[float], bottom: list[float]) -> float:
    """The median of the round-by-round ratios ``top / bottom``: each pair shared its noise."""
    return statistics.median(t / b for t, b in zip(top, bottom, strict=True))
