"""Settings of the example project (``manage.py`` and ``make demo`` use them).

``DATABASE_URL`` picks the database: ``sqlite:///relative/path``,
``sqlite:////absolute/path`` or ``postgres://user:password@host:port/name``.
Without it the demo keeps a SQLite file at ``.demo/db.sqlite3``.
"""

import os
from pathlib import Path

import dj_database_url

import chronica

BASE_DIR = Path(__file__).resolve().parent.parent
DEMO_DIR = BASE_DIR / ".demo"

DATABASE_URL = os.environ.get("DATABASE_URL", "")
if not DATABASE_URL:
    DEMO_DIR.mkdir(exist_ok=True)
    DATABASE_URL = f"sqlite:///{DEMO_DIR / 'db.sqlite3'}"
DATABASES = {"default": dj_database_url.parse(DATABASE_URL)}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # sqlite:///rel/path is relative to the repository, wherever manage.py runs from.
    DATABASES["default"]["NAME"] = BASE_DIR / DATABASES["default"]["NAME"]
elif DATABASES["default"]["ENGINE"].endswith("postgresql"):
    # A database that accepts connections but never answers must not hold every
    # request forever (chronica.W002): give up connecting after 5 s, and cancel any
    # statement after 30 s (DJANGO_STATEMENT_TIMEOUT, in milliseconds). And one that goes
    # silent mid-statement (a network black hole, a host gone), whose statement_timeout
    # cannot be heard (chronica.W004): TCP keepalives after 5 s of silence, 3 probes 2 s
    # apart, and 10 s at most for what was sent to be acknowledged.
    statement_timeout = int(os.environ.get("DJANGO_STATEMENT_TIMEOUT", "30000"))
    DATABASES["default"]["OPTIONS"] = {
        **DATABASES["default"].get("OPTIONS", {}),
        "connect_timeout": int(os.environ.get("DJANGO_CONNECT_TIMEOUT", "5")),
        "options": f"-c statement_timeout={statement_timeout}",
        "keepalives": 1,
        "keepalives_idle": 5,
        "keepalives_interval": 2,
        "keepalives_count": 3,
        "tcp_user_timeout": 10000,
    }

# A development example served on 127.0.0.1: never deploy this secret.
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "example-project-only-not-a-secret")
# Off unless asked for (DJANGO_DEBUG=1): with DEBUG on, any error page is a full
# traceback with the settings, and Django keeps every query in memory.
DEBUG = os.environ.get("DJANGO_DEBUG") == "1"
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]

USE_TZ = True
TIME_ZONE = "UTC"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",  # the person's token, for agents that run as services
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "chronica",
    "chronica.integrations.pydantic_ai",  # PydanticAI conversations' tables
    "chronica.integrations.langgraph",  # LangGraph checkpoints (the demo's reminder agent)
    "example_project.dinner",
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
ROOT_URLCONF = "example_project.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # Project-wide overrides of third-party templates (drf-spectacular's Redoc page).
        "DIRS": [BASE_DIR / "example_project" / "templates"],
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
# The admin's, the browsable API's and Swagger UI's files, served by whitenoise
# with DEBUG off alike under runserver, uvicorn and gunicorn. The example reads
# them from the installed apps (no collectstatic step); a deployment sets
# STATIC_ROOT and runs collectstatic instead.
WHITENOISE_USE_FINDERS = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGIN_URL = "admin:login"

# chronica's defaults, written out so that a reader sees what there is to set.
CHRONICA = {
    "STORE": "chronica.stores.db.DjangoStore",
    "STORE_OPTIONS": {},
    "OWNER_ID": "chronica.api.owner_id_from_user",
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Agent services: "Authorization: Token <key>" of the person they work for.
        # First, so that a request without credentials is challenged for a token (401).
        "rest_framework.authentication.TokenAuthentication",
        # People in a browser: the admin's or the browsable API's sign-in.
        "rest_framework.authentication.SessionAuthentication",
        # No BasicAuthentication: it runs the password hasher (~0.5 s of CPU) on every
        # request, for any username, so a few clients with wrong passwords stall the rest.
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # Per signed-in person and per anonymous address, counted in the default cache (one
    # process's memory here; a deployment with several workers points it at Redis).
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.UserRateThrottle",
        "rest_framework.throttling.AnonRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "user": os.environ.get("DJANGO_THROTTLE_USER", "1200/minute"),
        "anon": os.environ.get("DJANGO_THROTTLE_ANON", "60/minute"),
        # POSTs to the sign-in forms, per address and per username (example_project/signin.py).
        "signin": os.environ.get("DJANGO_THROTTLE_SIGNIN", "10/minute"),
    },
    # How many proxies in front of the server append to X-Forwarded-For: the throttles
    # count the address that many hops from the right. The example is served directly
    # (uvicorn on 127.0.0.1), so 0: X-Forwarded-For is the client's to write and is
    # never trusted. Behind one nginx that sets it, DJANGO_NUM_PROXIES=1.
    "NUM_PROXIES": int(os.environ.get("DJANGO_NUM_PROXIES", "0")),
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # The API's other views (the schema, the docs) answer errors in JSON as chronica's
    # routes do: a database that fails is a 503 to retry, too many query parameters a 400.
    "EXCEPTION_HANDLER": "chronica.api.errors.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "chronica example API",
    "DESCRIPTION": "The sessions of the signed-in person and the acta their agents recorded.",
    "VERSION": chronica.__version__,
    "SERVE_INCLUDE_SCHEMA": False,  # the schema's own route is no operation of the API
    # drf-spectacular's, with its first generation in one thread: concurrent first
    # requests for the schema no longer race (docs/hardening.md).
    "DEFAULT_GENERATOR_CLASS": "chronica.api.schema.SchemaGenerator",
    # Swagger UI and Redoc from the installed drf-spectacular-sidecar, not from a CDN:
    # the docs pages work on a machine with no internet.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", REDIS_URL)
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", CELERY_BROKER_URL)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_TASK_DEFAULT_QUEUE", "celery")

# Errors (a 500's traceback) go to the server's stderr, where uvicorn's and gunicorn's
# own logs are, whatever DEBUG says.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    "loggers": {
        "django.request": {"handlers": ["stderr"], "level": "ERROR", "propagate": False},
        "chronica": {"handlers": ["stderr"], "level": "WARNING"},
    },
}
