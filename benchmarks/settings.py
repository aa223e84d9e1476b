"""Django settings for the benchmarks: the dedicated database ``chronica_bench``, DEBUG off.

``CHRONICA_BENCH_PG_URL`` (default ``postgres://postgres@127.0.0.1:5432/chronica_bench``)
names the server and the database; it is never one of the test databases.

``CHRONICA_BENCH_DB=sqlite`` runs on a SQLite file instead (``CHRONICA_BENCH_SQLITE``,
default ``benchmarks/results/bench.sqlite3``), Django's default SQLite options: only
the cases that need no PostgreSQL (``http``, ``tokens``) run there.
"""

import os
from pathlib import Path

import dj_database_url

SECRET_KEY = "chronica-benchmarks-only"
DEBUG = False  # with DEBUG on, Django keeps every query: memory and time would lie
USE_TZ = True
TIME_ZONE = "UTC"
ALLOWED_HOSTS = ["testserver"]

BENCH_DB = os.environ.get("CHRONICA_BENCH_DB", "postgres")
PG_URL = os.environ.get(
    "CHRONICA_BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432/chronica_bench"
)
# Persistent connections, as a deployment that cares about latency runs: with
# CONN_MAX_AGE = 0 chronica's views close the connection at the end of every answer
# (``BaseViewSet.finalize_response``), so case 18 would time a reconnect per request.
_database = {**dj_database_url.parse(PG_URL), "CONN_MAX_AGE": 600}
NOWAIT = "-c synchronous_commit=off"
if BENCH_DB == "postgres":
    DATABASES = {
        # Django's defaults: client-side binding, no prepared statements (Django turns
        # them off so that transaction-pooling poolers keep working).
        "default": _database,
        # The same database with psycopg's own defaults, the floor's: server-side binding,
        # statements prepared after five runs.
        "prepared": {
            **_database,
            "OPTIONS": {"server_side_binding": True, "prepare_threshold": 5},
        },
        # Django's defaults, but a commit does not wait for the WAL to reach the disk. On a
        # shared machine a commit's fsync takes 0.5 to 10 ms and hides chronica's own cost;
        # the floor gets the same setting (NOWAIT) when it is compared with this alias.
        "nowait": {**_database, "OPTIONS": {"options": NOWAIT}},
        "prepared-nowait": {
            **_database,
            "OPTIONS": {
                "server_side_binding": True,
                "prepare_threshold": 5,
                "options": NOWAIT,
            },
        },
    }
    # Django's connection pool (psycopg_pool): case 19 writes a thread through it, as
    # docs/langgraph.md advises for sync graphs (Django's pool takes CONN_MAX_AGE 0).
    DATABASES["pooled"] = {**_database, "CONN_MAX_AGE": 0, "OPTIONS": {"pool": True}}
elif BENCH_DB == "sqlite":
    _sqlite = os.environ.get(
        "CHRONICA_BENCH_SQLITE",
        str(Path(__file__).resolve().parent / "results" / "bench.sqlite3"),
    )
    Path(_sqlite).parent.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {"ENGINE": "django.db.backends.sqlite3", "NAME": _sqlite, "CONN_MAX_AGE": 600}
    }
else:
    raise RuntimeError(f"CHRONICA_BENCH_DB={BENCH_DB!r}: use 'postgres' or 'sqlite'")
INSTALLED_APPS = [
    "django.contrib.auth",  # DRF's AnonymousUser and authentication classes (case 18)
    "django.contrib.contenttypes",
    "rest_framework",
    "chronica",
    "chronica.integrations.pydantic_ai",
    "chronica.integrations.langgraph",
]
MIDDLEWARE: list[str] = []  # case 18 times DRF and chronica, not a project's middleware
ROOT_URLCONF = "benchmarks.urls"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
CHRONICA = {"STORE": "chronica.stores.db.DjangoStore"}
# Case 15 through PgBouncer: PG_URL is the pooler, live follow LISTENs past it.
LISTEN_URL = os.environ.get("CHRONICA_BENCH_PG_LISTEN_URL")
if LISTEN_URL:
    DATABASES["listen"] = dict(dj_database_url.parse(LISTEN_URL))
    CHRONICA["LISTEN_DATABASE"] = "listen"
