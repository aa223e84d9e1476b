"""Run example_project in a subprocess on the test database of this pytest run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

from django.db import connection

ROOT = Path(__file__).resolve().parent.parent


def database_url() -> str:
    """The test database as a ``DATABASE_URL`` that example_project/settings.py reads."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    if connection.vendor == "postgresql":
        auth = quote(db["USER"] or "postgres", safe="")
        if db["PASSWORD"]:
            auth += ":" + quote(db["PASSWORD"], safe="")
        return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    raise AssertionError(f"example_project runs on SQLite or PostgreSQL, not {connection.vendor}")


def environment(**extra: str) -> dict[str, str]:
    """The environment of ``python manage.py ...`` pointed at the test database."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "example_project.settings",
        "DATABASE_URL": database_url(),
        "PYTHONPATH": str(ROOT),
        "PYTHONIOENCODING": "utf-8",
        **extra,
    }


PYTHON = sys.executable


def stop(process: subprocess.Popen[bytes]) -> None:
    """End a server or worker this test started: politely, then for sure."""
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
