"""``make test``: every leg of the build at once, each in its own log, with its time.

The legs share no database, file or queue: each has its own PostgreSQL database name,
SQLite file and Redis database, so they run side by side (most of a leg's time is
spent waiting on servers, subprocesses and sleeps, not on a core).

- ``checks``: ruff, ruff format, mypy, makemigrations --check, the docs site (--strict);
- ``sqlite``, ``postgres``: the suite on Python 3.11 + Django 5.2 (the venv);
- ``newest-sqlite``, ``newest-postgres``: the suite on Python 3.13 + Django 6.1 (nox),
  half of its files on each, the once-per-build tests in a leg of their own on each
  database (``newest-sqlite-once``, ``newest-postgres-once``).

The once-per-build tests (``@pytest.mark.once``: the OpenAI Agents SDK's and LangGraph's
own graph suites, each on one database, LangGraph's store suite, the wheel installed into
a new project, the browser, the 1,000-round HTTP races, PgBouncer, the replica clusters)
run on the newest pair only;
where Python 3.13 is missing they run on the venv's pair instead, and the newest pair's
legs say why they did not run.

The venv's pair runs the whole suite on each database. The newest pair runs each test
once, on one database or the other: the test files in two halves (sorted, taken in turn;
``CHRONICA_FILES``, tests/conftest.py), the first half on its SQLite leg, the second on
its PostgreSQL leg. It is there to catch what a newer Python or Django breaks, which
rarely depends on the database; the venv's pair catches what the database does.
``make matrix`` runs the newest pair's whole suite on both databases.

The slow tests (``@pytest.mark.slow``: the demo, the example project's servers, workers
and agents in processes of their own, the framework differentials, the lock races) run
on each database and on each pair once, not four times: a slow test of the first half
runs on the newest pair's SQLite leg (with its file) and on the venv's PostgreSQL leg,
one of the second half on the newest pair's PostgreSQL leg and the venv's SQLite leg
(``CHRONICA_SLOW``). Each leg says which half it skips. A test of one database only
runs on that database's leg of its half.

``python scripts/ci.py [LEG ...]`` runs the named legs (all by default). Logs go to
``.ci-logs/<leg>.log``; a failed leg's tail is printed at the end.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / ".ci-logs"
VENV = Path(os.environ.get("VENV", ROOT / ".venv"))
BIN = VENV / "bin"
NEWEST = ("3.13", "6.1")


@dataclass
class Leg:
    name: str
    commands: list[list[str]]
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    ended: float = 0.0
    code: int | None = None
    step: int = 0

    @property
    def log(self) -> Path:
        return LOGS / f"{self.name}.log"


def suite(
    db: str, leg: str, redis: int, once: bool, slow: str = "", files: str = ""
) -> dict[str, str]:
    """The environment of a pytest leg: its own database, file and Redis database;
    ``slow``: which half of the slow tests it runs (``CHRONICA_SLOW``; "": all of them);
    ``files``: which half of the test files (``CHRONICA_FILES``; "": all of them; see the
    module's docstring)."""
    env = {
        "PYTHONWARNINGS": "error::DeprecationWarning",
        "CHRONICA_TEST_DB": db,
        "CHRONICA_TEST_PG_DBNAME": f"test_chronica_{leg.replace('-', '_')}",
        "CHRONICA_TEST_SQLITE": str(ROOT / ".test-db" / f"{leg}.sqlite3"),
        "CHRONICA_TEST_REDIS_URL": f"redis://127.0.0.1:6379/{redis}",
        # Each log ends with the tests that took the most processor time (tests/conftest.py).
        "CHRONICA_CPU_REPORT": "15",
    }
    if not once:
        env["CHRONICA_ONCE"] = "elsewhere"
    if slow:
        env["CHRONICA_SLOW"] = slow
    if files:
        env["CHRONICA_FILES"] = files
    return env


def newest_python() -> str | None:
    root = Path.home() / ".pyenv" / "versions"
    if root.is_dir():
        for found in sorted(root.iterdir(), reverse=True):
            if found.name.startswith(NEWEST[0] + "."):
                return str(found / "bin" / f"python{NEWEST[0]}")
    return shutil.which(f"python{NEWEST[0]}")


def legs(newest: bool) -> list[Leg]:
    # Each leg's log ends with its slowest tests: where the minutes go, run by run.
    slowest = "--durations=20"
    pytest = [str(BIN / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", slowest]
    mkdocs = [str(BIN / "mkdocs"), "build", "--strict", "--site-dir", str(VENV / "docs-site")]
    # The newest pair's legs take a half of the files each, the venv's legs the slow tests
    # of the other half on the same database (the module's docstring). Without the newest
    # pair, the venv's two legs run all of them.
    halves = ("first-half", "second-half") if newest else ("", "")
    found = [
        Leg(
            "checks",
            [
                [str(BIN / "ruff"), "check", "."],
                [str(BIN / "ruff"), "format", "--check", "."],
                [str(BIN / "mypy")],
                [str(BIN / "django-admin"), "makemigrations", "--check", "--dry-run"],
                mkdocs,
            ],
            {"DJANGO_SETTINGS_MODULE": "tests.settings", "NO_MKDOCS_2_WARNING": "1"},
        ),
        Leg("sqlite", [pytest], suite("sqlite", "sqlite", 11, once=not newest, slow=halves[1])),
        Leg(
            "postgres",
            [pytest],
            suite("postgres", "postgres", 12, once=not newest, slow=halves[0]),
        ),
    ]
    if newest:
        nox = [str(BIN / "nox"), "--no-install", "--reuse-existing-virtualenvs", "-s", "tests"]
        found += [
            Leg(
                "newest-sqlite",
                [[*nox, "--", "sqlite", "-m", "not once", slowest]],
                suite("sqlite", "newest-sqlite", 13, True, files=halves[0]),
            ),
            # The once-per-build tests (LangGraph's and the SDK's own suites, the HTTP
            # races, PgBouncer, the clusters, the browser) take minutes of waiting: a leg
            # of their own on each database.
            Leg(
                "newest-sqlite-once",
                [[*nox, "--", "sqlite", "-m", "once", slowest]],
                suite("sqlite", "newest-sqlite-once", 10, True),
            ),
            Leg(
                "newest-postgres",
                [[*nox, "--", "postgres", "-m", "not once", slowest]],
                suite("postgres", "newest-postgres", 14, True, files=halves[1]),
            ),
            Leg(
                "newest-postgres-once",
                [[*nox, "--", "postgres", "-m", "once", slowest]],
                suite("postgres", "newest-postgres-once", 15, True),
            ),
        ]
    return found


def start(leg: Leg, env: dict[str, str]) -> None:
    """The leg's next command (its first: a new log, and its clock starts)."""
    if leg.step == 0:
        leg.log.write_bytes(b"")
        leg.started = time.monotonic()
    command = leg.commands[leg.step]
    with leg.log.open("ab") as log:
        log.write(f"\n$ {' '.join(command)}\n".encode())
        log.flush()
        leg.process = subprocess.Popen(
            command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**env, **leg.env}
        )


def summary(leg: Leg) -> str:
    """The last line pytest (or the last command) printed."""
    lines = [line for line in leg.log.read_text(errors="replace").splitlines() if line.strip()]
    for line in reversed(lines):
        if " passed" in line or " failed" in line or " error" in line:
            return line.strip("= ")
    return lines[-1].strip() if lines else ""


def main(names: list[str]) -> int:
    began = time.monotonic()
    LOGS.mkdir(exist_ok=True)
    (ROOT / ".test-db").mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    newest = newest_python() is not None
    if not newest:
        print(
            f"make test: no Python {NEWEST[0]} (pyenv install {NEWEST[0]}): the newest pair's"
            " legs do not run; the once-per-build tests run on the venv's pair"
        )
    chosen = [leg for leg in legs(newest) if not names or leg.name in names]
    if os.environ.get("CHRONICA_SKIP_POSTGRES") == "1":
        print(
            "make test: SKIPPED the PostgreSQL legs (CHRONICA_SKIP_POSTGRES=1 was set on purpose)"
        )
        chosen = [leg for leg in chosen if "postgres" not in leg.name.split("-")]
    # The venv's legs start at once; the newest pair's start once its nox venv is in.
    later = [leg for leg in chosen if leg.name.startswith("newest-")]
    for leg in chosen:
        if leg not in later:
            start(leg, env)
    if later:
        # Its legs run in one nox venv: install it once, before they start.
        print("make test: the newest pair's venv (nox --install-only)", flush=True)
        installed = subprocess.run(
            [str(BIN / "nox"), "--install-only", "-s", "tests"],
            cwd=ROOT,
            env=env,
            stdout=(LOGS / "newest-install.log").open("wb"),
            stderr=subprocess.STDOUT,
        )
        if installed.returncode != 0:
            print((LOGS / "newest-install.log").read_text(errors="replace")[-6000:])
            for leg in chosen:  # the venv's legs, already running
                if leg.process is not None:
                    leg.process.kill()
                    leg.process.wait()
            return installed.returncode
    for leg in later:
        start(leg, env)
    print(f"make test: {', '.join(leg.name for leg in chosen)} at once; logs in .ci-logs/")
    report = time.monotonic()
    while any(leg.code is None for leg in chosen):
        time.sleep(1)
        for leg in chosen:
            if leg.code is not None or leg.process is None:
                continue
            code = leg.process.poll()
            if code is None:
                continue
            if code == 0 and leg.step + 1 < len(leg.commands):
                leg.step += 1
                start(leg, env)
                continue
            leg.code, leg.ended = code, time.monotonic()
            print(
                f"  {leg.name}: {'passed' if code == 0 else f'FAILED ({code})'}"
                f" in {(leg.ended - leg.started) / 60:.1f} min",
                flush=True,
            )
        if time.monotonic() - report > 120:
            report = time.monotonic()
            running = [leg.name for leg in chosen if leg.code is None]
            load = os.getloadavg()[0]
            print(
                f"  ... {(report - began) / 60:.0f} min: {', '.join(running)} running"
                f" (load {load:.1f})",
                flush=True,
            )
    print(f"\n{'leg':<21} {'result':<8} {'minutes':>7}  summary")
    for leg in chosen:
        result = "passed" if leg.code == 0 else "FAILED"
        print(f"{leg.name:<21} {result:<8} {(leg.ended - leg.started) / 60:>7.1f}  {summary(leg)}")
    print(f"make test: {(time.monotonic() - began) / 60:.1f} min in all")
    failed = [leg for leg in chosen if leg.code != 0]
    for leg in failed:
        tail = leg.log.read_text(errors="replace").splitlines()[-150:]
        print(f"\n---- the end of .ci-logs/{leg.name}.log ----")
        print("\n".join(tail))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
