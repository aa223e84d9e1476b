"""The documentation site: it builds with ``mkdocs build --strict``, every Python snippet of
docs/ runs as written (each page in order, in a namespace of its own), the README stays a
five-minute read, and the compatibility table says what CI tests and pyproject allows.

A page whose examples continue another's says so (``<!-- snippets continue other.md -->``):
that page's snippets run first, in the same namespace. A snippet that cannot run on its
own (a settings or urls fragment, a view body) says so on the line before it
(``<!-- not run here: why -->``), and is compiled instead.
"""

from __future__ import annotations

import ast
import asyncio
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db import connections

from tests.readme import DOCS, README, ROOT, section

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SNIPPET = re.compile(
    r"^(?:<!-- not run here: (?P<why>.+?) -->\n)?```python\n(?P<code>.*?)^```", re.M | re.S
)


def snippets(page: Path) -> list[tuple[str, str | None]]:
    """The ``python`` blocks of ``page``: (code, why it is not run here, or None)."""
    text = page.read_text(encoding="utf-8")
    return [(m["code"], m["why"]) for m in SNIPPET.finditer(text)]


PAGES = sorted(page for page in DOCS.rglob("*.md") if snippets(page))


@pytest.mark.once
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    # The site is the same whatever the database: built once a build (the checks leg
    # builds it too, on the venv's pair), not in every leg.
    if os.environ.get("CHRONICA_TEST_DB") == "postgres":
        pytest.skip("the site does not depend on the database: the SQLite run builds it")
    done = subprocess.run(
        [Path(sys.executable).parent / "mkdocs", "build", "--strict", "--site-dir", tmp_path],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # The home page is the README's own quickstart, included, not copied.
    assert "createsuperuser" in (tmp_path / "index.html").read_text()


def test_every_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in DOCS.rglob("*.md"):
        assert str(page.relative_to(DOCS)) in nav, f"{page.name} is not in mkdocs.yml's nav"


def run_snippets(page: Path, namespace: dict[str, Any]) -> None:
    continued = re.search(r"^<!-- snippets continue (\S+) -->$", page.read_text(), flags=re.M)
    if continued:
        run_snippets(DOCS / continued[1], namespace)
    for n, (code, why) in enumerate(snippets(page), 1):
        name = f"{page.relative_to(ROOT)} snippet {n}"
        flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if why else 0
        compiled = compile(code, name, "exec", flags=flags)
        if why is None:
            exec(compiled, namespace)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_python_snippet_runs_as_written(page: Path, ardian: Any, capsys: Any) -> None:
    try:
        run_snippets(page, {"__name__": f"docs.{page.stem}"})
    finally:
        # A snippet's asyncio.run() reaches the database from asgiref's thread for sync
        # code (sync_to_async): close that thread's connection as well as this one's.
        asyncio.run(sync_to_async(connections.close_all)())


def test_the_readme_is_a_five_minute_read() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 320
    for title in ("The two commands", "Install into your project", "Quickstart", "Settings"):
        assert f"\n## {title}\n" in text
    # What a new project under uvicorn needs for Swagger UI and the admin's styles.
    install = section("Install into your project")
    assert "collectstatic" in install
    assert "WhiteNoiseMiddleware" in install
    for link in re.findall(r"\]\(((?:docs/)?[\w./-]+\.md)\)", section("Documentation")):
        assert (ROOT / link).exists(), link


def _noxfile(name: str) -> Any:
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    (value,) = [
        n.value
        for n in tree.body
        if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == name for t in n.targets)
    ]
    return ast.literal_eval(value)


def _row(table: str, name: str) -> list[str]:
    (line,) = [line for line in table.splitlines() if line.startswith(f"| {name} |")]
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_the_compatibility_table_is_what_ci_tests_and_pyproject_allows() -> None:
    table = (DOCS / "compatibility.md").read_text(encoding="utf-8")
    (make_test,) = [_noxfile("MAKE_TEST")]
    (matrix,) = _noxfile("MATRIX")  # one pair today; a second adds a column
    _, python_test, python_matrix, python_allowed = _row(table, "Python")
    assert (python_test, python_matrix) == (make_test[0], matrix[0])
    assert f"`{PYPROJECT['project']['requires-python']}`" == python_allowed
    _, django_test, django_matrix, django_allowed = _row(table, "Django")
    assert (django_test, django_matrix) == (make_test[1], matrix[1])
    assert f"`{PYPROJECT['project']['dependencies'][0]}`" == django_allowed
    # Every pin of every extra, and the exact releases the test group runs.
    for extra, pins in PYPROJECT["project"]["optional-dependencies"].items():
        for pin in pins:
            assert f"`{pin}`" in table, (extra, pin)
    for pin in PYPROJECT["dependency-groups"]["test"]:
        if isinstance(pin, str) and "==" in pin:
            version = pin.split("==")[1]
            assert version in table, pin
