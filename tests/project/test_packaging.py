"""The package's metadata says what ``make matrix`` proves, in words PyPI accepts."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from packaging.specifiers import SpecifierSet
from trove_classifiers import classifiers as known_classifiers

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def matrix() -> list[tuple[str, str]]:
    """``MATRIX`` of noxfile.py, the (Python, Django) pairs ``make matrix`` runs."""
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    (value,) = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "MATRIX" for t in node.targets)
    ]
    return [tuple(pair) for pair in ast.literal_eval(value)]


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


def test_every_classifier_is_one_pypi_knows():
    assert set(PROJECT["classifiers"]) <= known_classifiers
