"""Interleaved rounds: every side runs in every round, taking turns at going first."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping


def rounds(
    sides: Mapping[str, Callable[[], object]],
    *,
    ops: int | Mapping[str, int],
    rounds: int,
    warmup: int | Mapping[str, int],
) -> dict[str, list[float]]:
    """Operations per second of each side in each round.

    The sides run one after the other inside a round and the order rotates from
    round to round, so a slow moment of the machine lands on all of them alike.
    ``ops`` and ``warmup`` may differ by side (a mapping), so that a side a hundred
    times slower than the others still takes a round of about the same length.
    """
    names = list(sides)
    per_round = {n: ops if isinstance(ops, int) else ops[n] for n in names}
    warm = {n: warmup if isinstance(warmup, int) else warmup[n] for n in names}
    for name in names:
        for _ in range(warm[name]):
            sides[name]()
    result: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            op, n = sides[name], per_round[name]
            start = time.perf_counter()
            for _ in range(n):
                op()
            result[name].append(n / (time.perf_counter() - start))
    return result


def median(values: list[float]) -> float:
    """The median: one noisy round cannot move it."""
    return statistics.median(values)


def paired_ratio(top: list[float], bottom: list[float]) -> float:
    """The median of the round-by-round ratios ``top / bottom``: each pair shared its noise."""
    return statistics.median(t / b for t, b in zip(top, bottom, strict=True))


def percentile(values: list[float], p: float) -> float:
    """The ``p``-th percentile (0-100) of ``values``, nearest rank."""
    ordered = sorted(values)
    rank = max(1, round(p / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]
