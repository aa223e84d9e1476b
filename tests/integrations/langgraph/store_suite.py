"""The store tests shipped in ``langgraph-checkpoint-sqlite``'s source distribution,
fetched once (``pip download``, the pinned release) into the virtualenv, and loaded
as modules of their own: ``test_store_suite.py`` takes from them every test that
needs nothing but a store (the ``store`` fixture), and gives it a ChronicaStore."""

from __future__ import annotations

import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.sdists import sdist

VERSION = "3.1.2"
# What these tests take besides a store: the semantic index, SQLite connections.
NOT_OURS = {"fake_embeddings", "conn_type", "distance_type", "conn_string"}


def source() -> Path:
    """The unpacked sdist of langgraph-checkpoint-sqlite, downloaded once."""
    return sdist("langgraph-checkpoint-sqlite", VERSION, "tests/test_store.py")


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
