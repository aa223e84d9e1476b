"""The package's metadata says what ``make matrix`` proves, in words PyPI accepts."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

import django as installed
from packaging.specifiers import SpecifierSet
from trove_classifiers import classifiers as known_classifiers

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _noxfile_constant(name: str):
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    (value,) = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
    ]
    return ast.literal_eval(value)


def matrix() -> list[tuple[str, str]]:
    """The (Python, Django) pairs CI tests: ``make test``'s own and ``make matrix``'s."""
    return [tuple(_noxfile_constant("MAKE_TEST"))] + [
        tuple(pair) for pair in _noxfile_constant("MATRIX")
    ]


def classified(prefix: str) -> set[str]:
    return {c.removeprefix(prefix) for c in PROJECT["classifiers"] if c.startswith(prefix)}


def test_the_django_classifiers_are_the_versions_the_matrix_tests():
    assert classified("Framework :: Django :: ") == {django for _, django in matrix()}


def test_the_matrix_fits_the_declared_requirements():
    (django,) = [d for d in PROJECT["dependencies"] if d.lower().startswith("django")]
    allowed = SpecifierSet(django.removeprefix("Django").removeprefix("django"))
    python = SpecifierSet(PROJECT["requires-python"])
    for python_version, django_version in matrix():
        assert f"{django_version}.0" in allowed
        assert f"{python_version}.0" in python
        assert python_version in classified("Programming Language :: Python :: ")


def test_make_test_runs_the_pair_noxfile_names():
    python, django = _noxfile_constant("MAKE_TEST")
    # make test's venv is the pair MAKE_TEST names; a tox/nox venv of the matrix is not.
    if "/.nox/" not in sys.prefix:
        assert f"{sys.version_info[0]}.{sys.version_info[1]}" == python
        assert installed.__version__.startswith(django + ".")


def test_every_classifier_is_one_pypi_knows():
    assert set(PROJECT["classifiers"]) <= known_classifiers


def test_the_licence_is_mit_and_ships_with_the_package():
    assert PROJECT["license"] == "MIT"
    assert PROJECT["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License\n")
    # tests/project/test_install.py finds it inside the wheel and the sdist it builds.


def test_the_version_is_in_the_changelog_with_upgrade_notes():
    import re

    import chronica

    assert chronica.__version__ == PROJECT["version"]
    changelog = (ROOT / "CHANGELOG.md").read_text()
    versions = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", changelog, flags=re.M)
    assert versions[0] == PROJECT["version"]  # newest first
    for version in versions:
        entry = changelog.split(f"## [{version}]", 1)[1].split("\n## [", 1)[0]
        assert "### Added" in entry
        assert "### Upgrading" in entry  # migrations and settings a version needs


def test_the_readme_installs_the_wheel_of_this_version():
    readme = (ROOT / "README.md").read_text()
    assert f"dist/chronica-{PROJECT['version']}-py3-none-any.whl" in readme
