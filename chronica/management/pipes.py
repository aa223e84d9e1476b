"""Commands whose output is piped into ``head`` end quietly when the reader goes away."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def quiet_when_the_reader_leaves() -> Iterator[None]:
    """``chronica_show --json | head``: once ``head`` has its lines and closes the pipe,
    stop writing and exit without a ``BrokenPipeError`` traceback (the recipe of Python's
    ``signal`` documentation: stdout is pointed at ``/dev/null`` so that the interpreter's
    last flush does not fail again)."""
    try:
        yield
    except BrokenPipeError:
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(1) from None
