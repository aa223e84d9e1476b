"""The version matrix: ``make matrix`` (CI runs it after ``make test``).

``make test`` runs the suite on the oldest pair we support, Python 3.11 with Django
5.2 LTS (Django 6 needs Python 3.12), with deprecation warnings as errors; the matrix
adds the newest, Python 3.13 (under pyenv) with Django 6.1: the whole suite on SQLite
and PostgreSQL, deprecation warnings as errors.
"""

import os

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.download_python = "never"
nox.options.error_on_missing_interpreters = True

# The pair ``make test`` runs (its venv); the matrix runs the others.
MAKE_TEST = ("3.11", "5.2")
MATRIX = [("3.13", "6.1")]


def _interpreter(version: str) -> str:
    root = os.path.expanduser("~/.pyenv/versions")
    if os.path.isdir(root):
        for name in sorted(os.listdir(root), reverse=True):
            if name.startswith(version + "."):
                return os.path.join(root, name, "bin", f"python{version}")
    return version


@nox.session
@nox.parametrize(
    "python,django",
    [(_interpreter(p), d) for p, d in MATRIX],
    ids=[f"py{p}-django{d}" for p, d in MATRIX],
)
def tests(session: nox.Session, django: str) -> None:
    session.install("--upgrade", "pip>=25.1")
    session.install(
        "-e", ".[api,postgres]", "--group", "test", "--group", "docs", f"django~={django}.0"
    )
    env = {
        "PYTHONPATH": os.getcwd(),
        "PYTHONWARNINGS": "error::DeprecationWarning",
        # make test races 2,000 rounds over HTTP (tests/stores/test_isolation.py); the matrix
        # checks that the race still runs on each version.
        "CHRONICA_RACE_ROUNDS": "300",
    }
    session.run(
        "python",
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        env={
            **env,
            "CHRONICA_TEST_DB": "sqlite",
            "CHRONICA_TEST_SQLITE": f"{session.virtualenv.location}/test.sqlite3",
        },
    )
    if os.environ.get("CHRONICA_SKIP_POSTGRES") == "1":
        session.log("SKIPPED: the PostgreSQL run (CHRONICA_SKIP_POSTGRES=1 was set on purpose)")
        return
    session.run(
        "python",
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        env={**env, "CHRONICA_TEST_DB": "postgres"},
    )
