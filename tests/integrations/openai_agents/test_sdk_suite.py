"""The OpenAI Agents SDK's own session and runner tests, on ChronicaSession.

Tests nobody here wrote: the SDK's session tests and its runner tests that use
SQLiteSession (runner, streaming, resume, tool failures, max turns, cancellation,
compaction), each with ChronicaSession put in place of SQLiteSession, once a build, on
PostgreSQL (``tests.database.framework_suite_on`` says why). See ``sdk.py``
for how they are fetched and run, and ``sdk_plugin/chronica_sdk_selection.py`` for the
few left out and why.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ...database import framework_suite_on
from . import sdk

pytestmark = [pytest.mark.slow, pytest.mark.once, framework_suite_on("postgres")]

# Fewer tests on a ChronicaSession than this means the swap stopped reaching them
# (a module renamed, SQLiteSession imported another way), not that they passed.
AT_LEAST_ON_CHRONICA = 240


def test_the_sdks_own_tests_pass_on_chronica_session(tmp_path: Path) -> None:
    process, summary = sdk.run("-q", report=tmp_path / "report.json")
    output = (process.stdout + process.stderr)[-15_000:]
    print(output)
    assert process.returncode == 0, output
    assert summary["failed"] == [], output
    assert summary["deselected_tests"] >= len(summary["deselected"])
    assert summary["built_a_session_and_passed"] >= AT_LEAST_ON_CHRONICA, output
