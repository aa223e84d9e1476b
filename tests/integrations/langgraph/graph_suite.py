"""Fetch LangGraph's own graph tests and run them on ChronicaSaver.

The tests ship in LangGraph's source distribution on PyPI, not in its wheel. They are
downloaded once (``pip download``, the pinned release) into the virtualenv and
unpacked there: nothing of them is committed here.

They run in a pytest process of their own, with the sdist as root directory, because
they import themselves as the package ``tests``, the name of chronica's own tests.
``graph_plugin/`` goes on its path: the plugin that puts ChronicaSaver in place of
the in-memory saver of LangGraph's checkpointer fixtures, the list of modules and of
known failures, and the Django settings (chronica's test settings, on a database of
its own). ``NO_DOCKER=true``: LangGraph's fixtures leave out their PostgreSQL and
Redis savers, which need its docker compose.

By hand, with the database chosen as for the rest of the suite::

    CHRONICA_TEST_DB=postgres python -m tests.integrations.langgraph.graph_suite [pytest options]

``CHRONICA_LG_BASELINE=1`` runs the same tests on LangGraph's in-memory saver.
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
PLUGIN_DIR = Path(__file__).resolve().parent / "graph_plugin"


def selection() -> ModuleType:
    """``graph_plugin/chronica_lg_selection.py``: the version, the modules, the failures."""
    spec = importlib.util.spec_from_file_location(
        "chronica_lg_selection", PLUGIN_DIR / "chronica_lg_selection.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def source() -> Path:
    """The unpacked source distribution of the pinned LangGraph release, downloaded once."""
    return sdist("langgraph", selection().LANGGRAPH_VERSION, "tests/conftest.py")


def environment(report: Path | None = None, *, baseline: bool = False) -> dict[str, str]:
    """LangGraph's run: chronica's test database settings, on a database of its own."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONWARNINGS")}
    env["PYTHONPATH"] = str(PLUGIN_DIR)
    env["DJANGO_SETTINGS_MODULE"] = "chronica_lg_settings"
    env["NO_DOCKER"] = "true"
    env["CHRONICA_TEST_PG_DBNAME"] = os.environ.get("CHRONICA_TEST_PG_DBNAME", "test_chronica")
    env["CHRONICA_TEST_PG_DBNAME"] += "_lg"
    sqlite = os.environ.get(
        "CHRONICA_TEST_SQLITE", str(REPO / ".test-db" / "chronica-test.sqlite3")
    )
    env["CHRONICA_TEST_SQLITE"] = sqlite.removesuffix(".sqlite3") + "-lg.sqlite3"
    if baseline:
        env["CHRONICA_LG_BASELINE"] = "1"
    if report is not None:
        env["CHRONICA_LG_REPORT"] = str(report)
    return env


def command(*pytest_args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "chronica_lg_plugin",
        "-p",
        "no:cacheprovider",
        # LangGraph's own options (pyproject.toml) name plugins it does not need here.
        "-o",
        "addopts=",
        *selection().MODULES,
        *pytest_args,
    ]


def run(
    *pytest_args: str, report: Path, baseline: bool = False
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """Run LangGraph's tests; return the process and the plugin's summary of the run."""
    process = subprocess.run(
        command(*pytest_args),
        cwd=source(),
        env=environment(report, baseline=baseline),
        capture_output=True,
        text=True,
        timeout=3600,
    )
    summary = json.loads(report.read_text()) if report.is_file() else {}
    return process, summary


if __name__ == "__main__":
    sys.exit(
        subprocess.run(
            command(*sys.argv[1:]),
            cwd=source(),
            env=environment(baseline=os.environ.get("CHRONICA_LG_BASELINE") == "1"),
            check=False,
        ).returncode
    )
