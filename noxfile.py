"""The newest pair: Python 3.13 (under pyenv) with Django 6.1, the whole suite on
SQLite and PostgreSQL, deprecation warnings as errors.

``make test`` (scripts/ci.py) runs it beside the venv's pair, the oldest we support
(Python 3.11 with Django 5.2 LTS; Django 6 needs Python 3.12); ``make matrix`` runs it
alone.
"""

import os

import nox

# uv (the dev group's) makes the venv and installs into it: seconds where pip took minutes.
nox.options.default_venv_backend = "uv"
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
    # pip too: tests/sdists.py fetches the frameworks' source distributions with it.
    session.install(
        "-e", ".[api,postgres]", "--group", "test", "--group", "docs", f"django~={django}.0", "pip"
    )
    # make test (scripts/ci.py) runs each database as a leg of its own, at once with the
    # others: ``nox -s tests -- sqlite [pytest arguments]``; without one, both in turn.
    databases = session.posargs[:1] or ["sqlite", "postgres"]
    more = session.posargs[1:]
    env = {"PYTHONPATH": os.getcwd(), "PYTHONWARNINGS": "error::DeprecationWarning"}
    for database in databases:
        if database == "postgres" and os.environ.get("CHRONICA_SKIP_POSTGRES") == "1":
            session.log("SKIPPED: the PostgreSQL run (CHRONICA_SKIP_POSTGRES=1 was set on purpose)")
            continue
        here = {**env, "CHRONICA_TEST_DB": database}
        if database == "sqlite" and "CHRONICA_TEST_SQLITE" not in os.environ:
            here["CHRONICA_TEST_SQLITE"] = f"{session.virtualenv.location}/test.sqlite3"
        session.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *more, env=here)
