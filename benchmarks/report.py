"""The table's rows and how they print. A leaf: it imports nothing of the benchmarks."""

from __future__ import annotations

import dataclasses

DEFAULTS = "Django's defaults"
PREPARED = "prepared statements on"
NOWAIT = "no wait for the disk"


@dataclasses.dataclass(frozen=True)
class Row:
    """One line of the table: a case's measure, chronica's figure, the baseline's, the ratio,
    the target and whether this run met it (``""`` where a row carries no target)."""

    case: str
    measure: str
    chronica: str = ""
    baseline: str = ""
    ratio: str = ""
    target: str = ""
    met: str = ""


def met(ok: bool) -> str:
    return "yes" if ok else "NO"


def rate(value: float) -> str:
    return f"{value:,.0f} ops/s"


def us(ops_per_s: float) -> str:
    """The time of one operation, from a rate."""
    return f"{1e6 / ops_per_s:,.0f} µs"


def table(rows: list[Row]) -> str:
    head = ("case", "measure", "chronica", "baseline", "ratio", "target", "met")
    lines = [head] + [
        (r.case, r.measure, r.chronica, r.baseline, r.ratio, r.target, r.met) for r in rows
    ]
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    out = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) + " |"
        for line in lines
    ]
    out.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(out)
