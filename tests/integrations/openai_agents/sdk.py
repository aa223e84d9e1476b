"""Fetch the OpenAI Agents SDK's own tests and run them on ChronicaSession.

The tests ship in the SDK's source distribution on PyPI, not in its wheel. They are
downloaded once (``pip download``, the pinned release) into the virtualenv, next to
the installed SDK, and unpacked there: nothing of them is committed here.

They run in a pytest process of their own, with the SDK's checkout as root directory,
because they import themselves as the package ``tests``, the name of chronica's own
tests. ``sdk_plugin/`` goes on its path: the plugin that puts ChronicaSession in
place of SQLiteSession, the list of what runs and why some tests do not, and the
Django settings (chronica's test settings, on a database of its own).

By hand, with the database chosen as for the rest of the suite::

    CHRONICA_TEST_DB=postgres python -m tests.integrations.openai_agents.sdk [pytest options]
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.sdists import sdist

REPO = Path(__file__).resolve().parents[3]
PLUGIN_DIR = Path(__file__).resolve().parent / "sdk_plugin"


def selection() -> ModuleType:
    """``sdk_plugin/chronica_sdk_selection.py``: the version, the modules, the deselected."""
    spec = importlib.util.spec_from_file_location(
        "chronica_sdk_selection", PLUGIN_DIR / "chronica_sdk_selection.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sdk_source() -> Path:
    """The unpacked source distribution of the pinned SDK release, downloaded once."""
    return sdist("openai-agents", selection().SDK_VERSION, "tests/conftest.py")


def environment(report: Path | None = None) -> dict[str, str]:
    """The SDK's run: chronica's test database settings, on a database of its own."""
    # Warnings raised as errors (make matrix) are for chronica's code, which the rest of
    # the suite runs; the SDK's test code is not ours to change.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONWARNINGS")}
    # The SDK's tests are the package ``tests``: chronica's own must not be on the path.
    env["PYTHONPATH"] = str(PLUGIN_DIR)
    env["DJANGO_SETTINGS_MODULE"] = "chronica_sdk_settings"
    # The suite that starts this run holds its own test database: never the same one.
    env["CHRONICA_TEST_PG_DBNAME"] = os.environ.get("CHRONICA_TEST_PG_DBNAME", "test_chronica")
    env["CHRONICA_TEST_PG_DBNAME"] += "_sdk"
    sqlite = os.environ.get(
        "CHRONICA_TEST_SQLITE", str(REPO / ".test-db" / "chronica-test.sqlite3")
    )
    env["CHRONICA_TEST_SQLITE"] = sqlite.removesuffix(".sqlite3") + "-sdk.sqlite3"
    if report is not None:
        env["CHRONICA_SDK_REPORT"] = str(report)
    return env


def command(*pytest_args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "chronica_sdk_plugin",
        "-p",
        "no:cacheprovider",
        *selection().MODULES,
        *pytest_args,
    ]


def run(*pytest_args: str, report: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """Run the SDK's tests; return the process and the plugin's summary of the run."""
    process = subprocess.run(
        command(*pytest_args),
        cwd=sdk_source(),
        env=environment(report),
        capture_output=True,
        text=True,
        timeout=3600,
    )
    summary = json.loads(report.read_text()) if report.is_file() else {}
    return process, summary


if __name__ == "__main__":
    sys.exit(
        subprocess.run(
            command(*sys.argv[1:]), cwd=sdk_source(), env=environment(), check=False
        ).returncode
    )
