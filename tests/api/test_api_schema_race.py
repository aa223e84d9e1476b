"""The first schema generations of a process, side by side: drf-spectacular imports its
extensions' target classes then, not thread-safely (tfranzel/drf-spectacular#1122).
``chronica.api.schema.SchemaGenerator`` lets one thread generate the first schema while
the others wait.

Each run is a fresh process (nothing imported yet). The race is made certain rather
than likely: the first failed import of an extension's target (an optional contrib
extension whose package is not installed) returns after the other threads have passed
that extension, as a slow import under load would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..exampleproject import ROOT

pytestmark = pytest.mark.slow

GENERATE_SIDE_BY_SIDE = """
import json, sys, threading, time

import django

django.setup()

import drf_spectacular.openapi  # noqa: F401  (registers the contrib extensions)
from django.utils.module_loading import import_string
from drf_spectacular import plumbing

real, failed = plumbing.import_string, []


def slow_first_failure(path):
    try:
        return real(path)
    except ImportError:
        failed.append(path)
        if len(failed) == 1:
            time.sleep(0.5)
        raise


plumbing.import_string = slow_first_failure
generator = import_string(sys.argv[1])
start, errors = threading.Barrier(4), []


def generate():
    start.wait()
    try:
        generator().get_schema(request=None, public=True)
    except Exception as exc:
        errors.append(repr(exc))


threads = [threading.Thread(target=generate) for _ in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(json.dumps({"errors": errors, "failed_imports": len(failed)}))
"""


def generate_side_by_side(generator: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", GENERATE_SIDE_BY_SIDE, generator],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_drf_spectacular_alone_races():
    """The harness reproduces upstream's race: without the lock a first generation fails."""
    found = generate_side_by_side("drf_spectacular.generators.SchemaGenerator")
    assert found["failed_imports"] > 1
    assert any("NoneType" in error for error in found["errors"]), found


def test_chronicas_generator_generates_the_first_schema_alone():
    found = generate_side_by_side("chronica.api.schema.SchemaGenerator")
    assert found["failed_imports"] > 0
    assert found["errors"] == []


def test_chronica_calls_no_private_api_of_drf_spectacular():
    import chronica

    sources = Path(chronica.__file__).parent
    found = [
        f"{path.relative_to(sources)}:{number}"
        for path in sources.rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "_registry" in line or "_load_class" in line
    ]
    assert found == []


def test_the_example_and_the_tests_name_the_generator():
    from django.conf import settings
    from drf_spectacular.settings import spectacular_settings

    from chronica.api.schema import SchemaGenerator

    assert spectacular_settings.DEFAULT_GENERATOR_CLASS is SchemaGenerator
    example = (ROOT / "example_project" / "settings.py").read_text()
    assert '"DEFAULT_GENERATOR_CLASS": "chronica.api.schema.SchemaGenerator"' in example
    assert settings.SPECTACULAR_SETTINGS["DEFAULT_GENERATOR_CLASS"].endswith("SchemaGenerator")
