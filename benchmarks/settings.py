"""Django settings for the benchmarks: the dedicated database ``chronica_bench``, DEBUG off.

``CHRONICA_BENCH_PG_URL`` (default ``postgres://postgres@127.0.0.1:5432/chronica_bench``)
names the server and the database; it is never one of the test databases.
"""

import os

import dj_database_url

SECRET_KEY = "chronica-benchmarks-only"
DEBUG = False  # with DEBUG on, Django keeps every query: memory and time would lie
USE_TZ = True
TIME_ZONE = "UTC"
ALLOWED_HOSTS: list[str] = []

PG_URL = os.environ.get(
    "CHRONICA_BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432/chronica_bench"
)
_database = dj_database_url.parse(PG_URL)
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
    "nowait": {**_database, "OPTIONS": {"options": "-c synchronous_commit=off"}},
    "prepared-nowait": {
        **_database,
        "OPTIONS": {
            "server_side_binding": True,
            "prepare_threshold": 5,
            "options": "-c synchronous_commit=off",
        },
    },
}
NOWAIT = "-c synchronous_commit=off"
INSTALLED_APPS = ["chronica", "chronica.integrations.pydantic_ai"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
CHRONICA = {"STORE": "chronica.stores.db.DjangoStore"}
# Case 15 through PgBouncer: PG_URL is the pooler, live follow LISTENs past it.
LISTEN_URL = os.environ.get("CHRONICA_BENCH_PG_LISTEN_URL")
if LISTEN_URL:
    DATABASES["listen"] = dj_database_url.parse(LISTEN_URL)
    CHRONICA["LISTEN_DATABASE"] = "listen"
