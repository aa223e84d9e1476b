"""The README's Python examples run as written."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


@pytest.mark.django_db
def test_the_quickstart_runs_as_written():
    (quickstart,) = [b for b in python_blocks() if "services.record_actum" in b]
    exec(compile(quickstart, "README.md quickstart", "exec"), {})


def test_the_conformance_example_runs_as_written():
    (example,) = [b for b in python_blocks() if "storeconformance" in b]
    from chronica.stores.memory import InMemoryStore

    namespace = {"MyStore": InMemoryStore}
    exec(compile(example, "README.md conformance", "exec"), namespace)
    for name in ("TestMyStore", "TestMyStoreIdempotent"):
        suite = namespace[name]()
        for case in dir(suite):
            if case.startswith("test_"):
                getattr(suite, case)()
