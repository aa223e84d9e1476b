"""Settings for chronica's own tests. ``CHRONICA_TEST_DB`` picks the database:
``sqlite`` (default, a file so that threads share it) or ``postgres``
(``CHRONICA_TEST_PG_URL``, default ``postgres://postgres@127.0.0.1:5432/postgres``)."""

import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
SECRET_KEY = "chronica-tests-only"
DEBUG = False
USE_TZ = True
TIME_ZONE = "UTC"
ALLOWED_HOSTS = ["*"]

TEST_DB = os.environ.get("CHRONICA_TEST_DB", "sqlite")

# Django's backends, but for the flush between transactional tests (tests/backends:
# content types and permissions kept). LangGraph's and the SDK's own suites load these
# settings by path (runpy) beside a ``tests`` package of their own, which ours must not
# shadow: Django's backends there.
if __name__ == "tests.settings":
    engines = {"postgres": "tests.backends.postgresql", "sqlite": "tests.backends.sqlite3"}
else:
    engines = {"postgres": "django.db.backends.postgresql", "sqlite": "django.db.backends.sqlite3"}
PG_URL = os.environ.get("CHRONICA_TEST_PG_URL", "postgres://postgres@127.0.0.1:5432/postgres")


if TEST_DB == "postgres":
    DATABASES = {
        "default": {
            **dj_database_url.parse(PG_URL),
            "ENGINE": engines["postgres"],
            # A timeout, as chronica.W002 asks, and keepalives, as chronica.W004 asks: a
            # test never hangs on a dead server.
            "OPTIONS": {
                "connect_timeout": 10,
                "keepalives_idle": 5,
                "keepalives_interval": 2,
                "keepalives_count": 3,
                "tcp_user_timeout": 10000,
            },
            "TEST": {"NAME": os.environ.get("CHRONICA_TEST_PG_DBNAME", "test_chronica")},
        }
    }
    # The pooler run (tests/stores/test_pgbouncer.py): PG_URL reaches PostgreSQL through
    # PgBouncer in transaction mode, and live follow LISTENs past it, as deployed.
    LISTEN_URL = os.environ.get("CHRONICA_TEST_PG_LISTEN_URL")
    if LISTEN_URL:
        DATABASES["listen"] = {
            **dj_database_url.parse(LISTEN_URL),
            "OPTIONS": DATABASES["default"]["OPTIONS"],
            "TEST": {"MIRROR": "default"},
        }
        CHRONICA = {"LISTEN_DATABASE": "listen"}
    # A second connection to the same database, as a read replica would be one
    # (tests/core/test_read_databases.py); nothing reads from it unless
    # CHRONICA["READ_DATABASES"] names it.
    DATABASES["replica"] = {**DATABASES["default"], "TEST": {"MIRROR": "default"}}
    # The same database through Django's connection pool (psycopg_pool), at most two
    # connections (tests/integrations/langgraph/test_connections.py); unused elsewhere.
    DATABASES["pooled"] = {
        **DATABASES["default"],
        "CONN_MAX_AGE": 0,  # (Django's pool takes no persistent connections)
        "OPTIONS": {
            **DATABASES["default"]["OPTIONS"],
            "pool": {"min_size": 0, "max_size": 2, "timeout": 1},
        },
        "TEST": {"MIRROR": "default"},
    }
elif TEST_DB == "sqlite":
    sqlite_file = os.environ.get(
        "CHRONICA_TEST_SQLITE", str(BASE_DIR / ".test-db" / "chronica-test.sqlite3")
    )
    Path(sqlite_file).parent.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            # Django's default SQLite options on purpose: chronica must not need
            # a special transaction_mode or journal mode to queue its writers.
            "ENGINE": engines["sqlite"],
            "NAME": sqlite_file,
            "TEST": {"NAME": sqlite_file},
        }
    }
else:
    raise RuntimeError(f"CHRONICA_TEST_DB={TEST_DB!r}: use 'sqlite' or 'postgres'")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",  # example_project's agents sign in with a person's token
    "drf_spectacular",
    "chronica",
    "chronica.integrations.pydantic_ai",
    "chronica.integrations.langgraph",
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
ROOT_URLCONF = "tests.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
STATIC_URL = "/static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
REST_FRAMEWORK = {"DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema"}
SPECTACULAR_SETTINGS = {"DEFAULT_GENERATOR_CLASS": "chronica.api.schema.SchemaGenerator"}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
