"""``manage.py check`` reports STORE_OPTIONS the store cannot take (chronica.E006)."""

from __future__ import annotations

import warnings

import pytest
from django.core.checks import run_checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import override_settings

DJANGO_STORE = "chronica.stores.db.DjangoStore"


class StoreWithADSN:
    """A third-party store that cannot be built without its connection string."""

    def __init__(self, dsn: str, *, pool_size: int = 4, **driver_options: object) -> None:
        self.dsn = dsn


def chronica_errors() -> list[str]:
    return [f"{m.id}: {m.msg}" for m in run_checks() if m.id and m.id.startswith("chronica.")]


@pytest.mark.parametrize(
    "config",
    [
        {"STORE_OPTIONS": {"using": "default"}},
        {"STORE": DJANGO_STORE, "STORE_OPTIONS": {}},
        {"STORE": "chronica.stores.memory.InMemoryStore"},
        {"STORE": StoreWithADSN, "STORE_OPTIONS": {"dsn": "x", "sslmode": "require"}},
    ],
    ids=["using", "none", "memory", "extra-driver-options"],
)
def test_options_the_store_takes_pass(config):
    with override_settings(CHRONICA=config):
        assert chronica_errors() == []


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ({"STORE_OPTIONS": {"usign": "default"}}, "unexpected keyword argument 'usign'"),
        (
            {"STORE": "chronica.stores.memory.InMemoryStore", "STORE_OPTIONS": {"using": "x"}},
            "unexpected keyword argument 'using'",
        ),
        ({"STORE": StoreWithADSN}, "missing a required argument: 'dsn'"),
    ],
    ids=["typo", "memory-takes-none", "required-missing"],
)
def test_options_the_store_refuses_are_chronica_E006(config, says):
    with override_settings(CHRONICA=config):
        (error,) = chronica_errors()

    assert error.startswith("chronica.E006: CHRONICA['STORE_OPTIONS']")
    assert says in error


def test_manage_py_check_fails_on_them():
    with (
        override_settings(CHRONICA={"STORE_OPTIONS": {"usign": "default"}}),
        pytest.raises(SystemCheckError, match=r"chronica\.E006"),
    ):
        call_command("check")


PG = "django.db.backends.postgresql"


def _databases(options):
    entry = {"ENGINE": PG, "NAME": "x", **({} if options is None else {"OPTIONS": options})}
    return {"default": entry}


def database_warnings(databases) -> list[str]:
    from chronica.checks import check_database_timeouts

    # DATABASES is overridden only for the check, which reads it; no query runs under it.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Overriding setting DATABASES")
        with override_settings(DATABASES=databases):
            return [f"{m.id}: {m.msg}" for m in check_database_timeouts()]


@pytest.mark.parametrize("options", [None, {}, {"options": "-c search_path=x"}])
def test_postgresql_without_timeouts_is_chronica_W002(options):
    (warning,) = database_warnings(_databases(options))

    assert warning.startswith("chronica.W002: DATABASES['default'] (PostgreSQL)")


@pytest.mark.parametrize(
    "options",
    [
        {"connect_timeout": 5},
        {"options": "-c statement_timeout=30000"},
        {"connect_timeout": 5, "options": "-c statement_timeout=30s"},
    ],
)
def test_postgresql_with_a_timeout_passes(options):
    assert database_warnings(_databases(options)) == []


def test_sqlite_needs_no_timeout():
    databases = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
    assert database_warnings(databases) == []


def test_example_project_sets_both_timeouts(monkeypatch):
    import importlib
    import sys

    monkeypatch.setenv("DATABASE_URL", "postgres://u@127.0.0.1:5432/db")
    sys.modules.pop("example_project.settings", None)
    try:
        example = importlib.import_module("example_project.settings")
    finally:
        sys.modules.pop("example_project.settings", None)
    options = example.DATABASES["default"]["OPTIONS"]
    assert options["connect_timeout"] == 5
    assert "statement_timeout=30000" in options["options"]
    assert database_warnings(example.DATABASES) == []


@pytest.mark.parametrize("value", [0, -1, "8MiB", 1.5, True, None])
def test_a_bad_response_byte_budget_is_chronica_E012(value):
    with override_settings(CHRONICA={"API_MAX_RESPONSE_BYTES": value}):
        (error,) = chronica_errors()

    assert error.startswith("chronica.E012: CHRONICA['API_MAX_RESPONSE_BYTES']")


def keepalive_warnings(databases) -> list[str]:
    from chronica.checks import check_database_keepalives

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Overriding setting DATABASES")
        with override_settings(DATABASES=databases):
            return [f"{m.id}: {m.msg}" for m in check_database_keepalives()]


@pytest.mark.parametrize(
    "options",
    [
        None,
        {"connect_timeout": 5, "options": "-c statement_timeout=30000"},
        {"keepalives": 1},  # the system's keepalives: two hours of silence first
        {"keepalives": 0, "keepalives_idle": 5},
        {"tcp_user_timeout": 0},
    ],
)
def test_postgresql_without_a_client_side_bound_is_chronica_W004(options):
    (warning,) = keepalive_warnings(_databases(options))
    assert warning.startswith("chronica.W004: DATABASES['default'] (PostgreSQL)")
    assert "silent" in warning


@pytest.mark.parametrize(
    "options",
    [
        {"tcp_user_timeout": 10000},
        {"keepalives_idle": 5},
        {"keepalives": "1", "keepalives_idle": 5},
    ],
)
def test_postgresql_with_keepalives_or_a_user_timeout_passes(options):
    assert keepalive_warnings(_databases(options)) == []


def test_example_project_bounds_a_silent_database(monkeypatch):
    import importlib
    import sys

    monkeypatch.setenv("DATABASE_URL", "postgres://u@127.0.0.1:5432/db")
    sys.modules.pop("example_project.settings", None)
    try:
        example = importlib.import_module("example_project.settings")
    finally:
        sys.modules.pop("example_project.settings", None)
    options = example.DATABASES["default"]["OPTIONS"]
    assert (options["keepalives_idle"], options["tcp_user_timeout"]) == (5, 10000)
    assert keepalive_warnings(example.DATABASES) == []
    assert keepalive_warnings({"default": {"ENGINE": "django.db.backends.sqlite3"}}) == []
