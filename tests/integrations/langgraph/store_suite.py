"""The store tests shipped in ``langgraph-checkpoint-sqlite``'s source distribution,
fetched once (``pip download``, the pinned release) into the virtualenv, and loaded
as modules of their own: ``test_store_suite.py`` takes from them every test that
needs nothing but a store (the ``store`` fixture), and gives it a ChronicaStore."""

from __future__ import annotations

import importlib.util
import inspect
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

VERSION = "3.1.2"
# What these tests take besides a store: the semantic index, SQLite connections.
NOT_OURS = {"fake_embeddings", "conn_type", "distance_type", "conn_string"}


def source() -> Path:
    """The unpacked sdist, downloaded once per virtualenv. CI's legs share a virtualenv
    and collect at the same time: the first takes the lock and downloads, the others
    wait for it and find the sdist there."""
    import fcntl

    cache = Path(sys.prefix) / "langgraph-checkpoint-sqlite-sdist"
    unpacked = cache / f"langgraph_checkpoint_sqlite-{VERSION}"
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (unpacked / "tests" / "test_store.py").is_file():
            return unpacked
        with tempfile.TemporaryDirectory(dir=cache) as download:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--quiet",
                    "--no-deps",
                    "--no-binary",
                    "langgraph-checkpoint-sqlite",
                    "--dest",
                    download,
                    f"langgraph-checkpoint-sqlite=={VERSION}",
                ],
                check=True,
                env={k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"},
            )
            (archive,) = Path(download).glob("langgraph_checkpoint_sqlite-*.tar.gz")
            with tarfile.open(archive) as tar:
                tar.extractall(download, filter="data")
            # One rename, so that an interrupted download never looks like a finished one.
            (Path(download) / unpacked.name).rename(unpacked)
    return unpacked


def module(name: str, *, theirs: dict[str, ModuleType] | None = None) -> ModuleType:
    """``tests/<name>.py`` of the sdist, imported as ``langgraph_sqlite_<name>``.
    ``theirs``: modules of the sdist it imports as ``tests.<name>`` (the package name
    of chronica's own tests), lent under that name while it is imported."""
    path = source() / "tests" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"langgraph_sqlite_{name}", path)
    assert spec is not None
    assert spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    lent = {f"tests.{k}": v for k, v in (theirs or {}).items()}
    sys.modules.update(lent)
    try:
        spec.loader.exec_module(loaded)
    finally:
        for key in lent:
            sys.modules.pop(key, None)
    return loaded


def store_tests(loaded: ModuleType) -> dict[str, Any]:
    """The module's test functions that take a ``store`` and nothing of SQLite's."""
    chosen = {}
    for name, function in vars(loaded).items():
        if not name.startswith("test_") or not inspect.isfunction(function):
            continue
        parameters = set(inspect.signature(function).parameters)
        if "store" in parameters and not parameters & NOT_OURS:
            chosen[name] = function
    return chosen
