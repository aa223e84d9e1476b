"""One memory probe per process: ``python -m benchmarks.memory CHRONICUM_ID LAST_N``.

The child warms up (imports, connection, one small read), resets the kernel's
peak-RSS mark, makes the one ``get_acta`` call and prints as JSON how far the
peak rose above the RSS it started from, and the peak of Python's own allocations.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import sys
import tracemalloc


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise LookupError(field)


def _reset_peak() -> bool:
    # Writing 5 to clear_refs resets VmHWM to the current RSS (Linux >= 4.0).
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
    except OSError:
        return False
    return True


def probe(chronicum_id: str, last_n: int) -> dict[str, int]:
    """Peak RSS rise (KiB) and traced Python peak (KiB) of one get_acta call."""
    import django

    django.setup()
    from chronica import services

    from .database import OWNER

    services.get_acta(OWNER, "bench-warm", last_n=last_n)
    gc.collect()
    if _reset_peak():
        before = _status_kb("VmRSS")
        services.get_acta(OWNER, chronicum_id, last_n=last_n)
        rss_rise = _status_kb("VmHWM") - before
    else:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        services.get_acta(OWNER, chronicum_id, last_n=last_n)
        rss_rise = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    gc.collect()
    tracemalloc.start()
    acta = services.get_acta(OWNER, chronicum_id, last_n=last_n)
    traced_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"rss_rise_kib": rss_rise, "traced_peak_kib": traced_peak // 1024, "acta": len(acta)}


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    print(json.dumps(probe(sys.argv[1], int(sys.argv[2]))))
