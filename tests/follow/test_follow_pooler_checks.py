"""``manage.py check`` on live follow behind a pooler: chronica.E013 for a
``LISTEN_DATABASE`` that names no PostgreSQL database of ``DATABASES``, chronica.W003
when the store's database looks pooled and no ``LISTEN_DATABASE`` goes past it."""

from __future__ import annotations

import pytest
from django.core.checks import run_checks
from django.test import override_settings

from chronica.checks import looks_pooled
from chronica.conf import chronica_settings

# With a connect timeout and keepalives, so that W002 (no timeouts) and W004 (no
# client-side bound) stay out of these checks.
PG = {
    "ENGINE": "django.db.backends.postgresql",
    "NAME": "app",
    "HOST": "127.0.0.1",
    "OPTIONS": {"connect_timeout": 5, "keepalives_idle": 5},
}
# DATABASES is overridden only for the checks, which read it; no query runs under it.
pytestmark = pytest.mark.filterwarnings("ignore:Overriding setting DATABASES")

SQLITE = {"ENGINE": "django.db.backends.sqlite3", "NAME": "x.sqlite3"}


def chronica_messages() -> list[str]:
    return [m.id for m in run_checks() if m.id and m.id.startswith("chronica.")]


@pytest.mark.parametrize(
    ("value", "says"),
    [("nope", "an alias of DATABASES"), (5, "an alias of DATABASES"), ("files", "PostgreSQL")],
    ids=["unknown-alias", "not-a-string", "not-postgresql"],
)
def test_a_bad_listen_database_is_chronica_E013(value, says):
    from django.conf import settings

    databases = {**settings.DATABASES, "files": SQLITE}
    with override_settings(DATABASES=databases, CHRONICA={"LISTEN_DATABASE": value}):
        found = [m for m in run_checks() if m.id.startswith("chronica.")]
    assert [m.id for m in found] == ["chronica.E013"]
    assert "LISTEN_DATABASE" in found[0].msg
    assert says in found[0].msg


def test_listen_database_defaults_to_the_stores_own_and_takes_an_alias():
    from django.conf import settings

    assert chronica_settings.LISTEN_DATABASE is None
    databases = {**settings.DATABASES, "direct": PG}
    with override_settings(DATABASES=databases, CHRONICA={"LISTEN_DATABASE": "direct"}):
        assert chronica_settings.LISTEN_DATABASE == "direct"
        assert chronica_messages() == []


@pytest.mark.parametrize(
    "pooled",
    [
        {**PG, "PORT": 6432},
        {**PG, "PORT": "6543"},
        {**PG, "HOST": "pgbouncer.internal"},
        {**PG, "HOST": "ep-cool-1-pooler.eu-central-1.aws.neon.tech"},
        {**PG, "DISABLE_SERVER_SIDE_CURSORS": True},
    ],
    ids=["pgbouncer-port", "supabase-port", "bouncer-host", "pooler-host", "django-setting"],
)
def test_follow_through_a_pooled_looking_database_is_chronica_W003(pooled):
    with override_settings(DATABASES={"default": pooled}, CHRONICA=None):
        assert "chronica.W003" in chronica_messages()
    with override_settings(DATABASES={"default": pooled}, CHRONICA={}):
        (warning,) = [m for m in run_checks() if m.id == "chronica.W003"]
    assert "LISTEN_DATABASE" in warning.hint
    # Past the pooler: no warning.
    databases = {"default": pooled, "direct": PG}
    with override_settings(DATABASES=databases, CHRONICA={"LISTEN_DATABASE": "direct"}):
        assert chronica_messages() == []


def test_no_W003_for_a_direct_database_or_another_store():
    with override_settings(DATABASES={"default": {**PG, "PORT": 5432}}, CHRONICA={}):
        assert chronica_messages() == []
    pooled = {**PG, "PORT": 6432}
    memory = {"STORE": "chronica.stores.memory.InMemoryStore"}
    with override_settings(DATABASES={"default": pooled}, CHRONICA=memory):
        assert chronica_messages() == []
    assert looks_pooled({**SQLITE, "PORT": 6432}) is None
