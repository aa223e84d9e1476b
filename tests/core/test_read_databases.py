"""``CHRONICA["READ_DATABASES"]``: windows, listings and ``get_chronicum`` may read from
a replica, never older than this process's own writes (chronica.stores.db.replicas).

Here the "replica" is a second connection to the test database (tests/settings.py):
it has replayed nothing (``pg_last_wal_replay_lsn()`` is NULL on a primary), so a read
that follows a write must go to the primary, and one before any write may go to the
replica. The real replica, held behind by ``recovery_min_apply_delay``, is in
tests/stores/test_clusters.py."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, connections
from django.test import override_settings

from chronica import services
from chronica.checks import check_settings
from chronica.conf import chronica_settings
from chronica.stores.db import replicas

from .. import scenario
from ..scenario import CHRONICUM, OWNER

REPLICA = ["replica"] if "replica" in settings.DATABASES else []  # PostgreSQL runs only
ROUTERS = ["chronica.routers.ReplicaRouter"]


def chronica_checks():
    # chronica's settings check alone: Django 6's own checks would open the databases.
    return [m.id for m in check_settings()]


@pytest.mark.parametrize("value", ["replica", [1], None, [""]])
def test_a_setting_that_is_not_a_list_of_aliases_is_chronica_E016(value):
    with override_settings(CHRONICA={"READ_DATABASES": value}):
        with pytest.raises(ImproperlyConfigured, match=r"CHRONICA\['READ_DATABASES'\]"):
            chronica_settings.READ_DATABASES  # noqa: B018
        assert chronica_checks() == ["chronica.E016"]


def test_an_alias_not_in_databases_is_chronica_E014():
    with override_settings(CHRONICA={"READ_DATABASES": ["nowhere"]}):
        assert chronica_checks() == ["chronica.E014"]


def test_a_replica_that_is_not_postgresql_is_chronica_E014(monkeypatch):
    lite = {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}
    monkeypatch.setitem(settings.DATABASES, "lite", lite)
    with override_settings(CHRONICA={"READ_DATABASES": ["lite"]}):
        assert chronica_checks() == ["chronica.E014"]


def test_no_read_databases_is_no_check_message():
    with override_settings(CHRONICA={"READ_DATABASES": []}):
        assert chronica_checks() == []


@pytest.mark.django_db(transaction=True, databases=["default", *REPLICA])
def test_a_read_after_a_write_never_goes_to_a_replica_that_has_not_replayed_it(monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("read replicas are PostgreSQL's: this run is on SQLite")
    monkeypatch.setattr(replicas, "_written", {})
    monkeypatch.setattr(replicas, "_replayed", {})
    monkeypatch.setattr(replicas, "stats", {"replica": 0, "primary": 0})
    sent: dict[str, list[str]] = {"default": [], "replica": []}

    def on(alias):
        def wrapper(execute, sql, params, many, context):
            sent[alias].append(sql)
            return execute(sql, params, many, context)

        return wrapper

    with override_settings(CHRONICA={"READ_DATABASES": ["replica"]}, DATABASE_ROUTERS=ROUTERS):
        # No write of this process yet: the replica answers.
        with connections["replica"].execute_wrapper(on("replica")):
            assert services.list_chronica(OWNER) == []
        assert replicas.stats == {"replica": 1, "primary": 0}
        assert "default" not in replicas._written
        with (
            connections["default"].execute_wrapper(on("default")),
            connections["replica"].execute_wrapper(on("replica")),
        ):
            services.record_acta(OWNER, scenario.acta())
            assert "default" in replicas._written  # the write's WAL position
            assert replicas.CURRENT_LSN in sent["default"]
            sent["default"].clear()
            sent["replica"].clear()
            window = services.get_acta(OWNER, CHRONICUM, last_n=3)
        assert [a.content for a in window] == [c for *_, c in scenario.SEVEN[-3:]]
        assert replicas.stats == {"replica": 1, "primary": 1}  # the window
        # The replica was asked how far it had replayed, and read nothing.
        assert sent["replica"]
        assert set(sent["replica"]) == {replicas.REPLAYED}
        assert any("FROM acta" in sql for sql in sent["default"])
        # Pops and deletes run on the primary. (The replica is asked how far it has
        # replayed by a receiver of chronicum_deleted that calls get_chronicum.)
        sent["replica"].clear()
        with connections["replica"].execute_wrapper(on("replica")):
            assert services.pop_actum(OWNER, CHRONICUM).content == scenario.SEVEN[-1][-1]
            services.delete_chronicum(OWNER, CHRONICUM)
        assert set(sent["replica"]) <= {replicas.REPLAYED}, sent["replica"]
    replicas.stats.clear()


@pytest.mark.django_db(transaction=True, databases=["default", *REPLICA])
def test_the_apis_window_reads_from_a_replica_as_the_docs_say(monkeypatch, ardian):
    """docs/deploying-replicas.md lists the API's window as replica-readable: a process
    that has written nothing reads it from the replica, in one statement there."""
    if connection.vendor != "postgresql":
        pytest.skip("read replicas are PostgreSQL's: this run is on SQLite")
    from rest_framework.test import APIClient

    owner = services.owner_id_for(ardian)
    written = services.record_acta(owner, scenario.acta())
    monkeypatch.setattr(replicas, "_written", {})  # another process wrote them
    monkeypatch.setattr(replicas, "_replayed", {})
    monkeypatch.setattr(replicas, "stats", {"replica": 0, "primary": 0})
    client = APIClient()
    client.force_authenticate(ardian)
    sent: list[str] = []

    def seen(execute, sql, params, many, context):
        sent.append(sql)
        return execute(sql, params, many, context)

    with (
        override_settings(CHRONICA={"READ_DATABASES": ["replica"]}, DATABASE_ROUTERS=ROUTERS),
        connections["replica"].execute_wrapper(seen),
    ):
        answer = client.get(f"/api/chronica/{CHRONICUM}/acta/?last_n=3")
    assert answer.status_code == 200, answer.content
    assert [a["id"] for a in answer.json()] == [a.id for a in written[-3:]]
    assert replicas.stats == {"replica": 1, "primary": 0}
    assert [sql for sql in sent if "FROM acta" in sql], sent


def test_replicas_without_chronicas_router_are_chronica_W006(monkeypatch):
    """Named replicas and no router of chronica's: reads would all stay on the primary."""
    monkeypatch.setitem(settings.DATABASES, "far", {"ENGINE": "django.db.backends.postgresql"})
    with override_settings(CHRONICA={"READ_DATABASES": ["far"]}):
        assert chronica_checks() == ["chronica.W006"]
    with override_settings(CHRONICA={"READ_DATABASES": ["far"]}, DATABASE_ROUTERS=ROUTERS):
        assert chronica_checks() == []


def test_the_router_speaks_only_for_chronicas_models():
    from django.contrib.auth.models import User

    from chronica import models
    from chronica.routers import ReplicaRouter

    with override_settings(CHRONICA={"READ_DATABASES": REPLICA or ["default"]}):
        assert ReplicaRouter().db_for_read(User) is None
        assert not hasattr(ReplicaRouter, "db_for_write")  # writes: the other routers'
    with override_settings(CHRONICA={"READ_DATABASES": []}):
        assert ReplicaRouter().db_for_read(models.Actum) is None


@pytest.mark.django_db(transaction=True, databases=["default", *REPLICA])
def test_without_the_router_every_read_stays_on_the_primary(monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("read replicas are PostgreSQL's: this run is on SQLite")
    monkeypatch.setattr(replicas, "stats", {"replica": 0, "primary": 0})
    sent: list[str] = []

    def seen(execute, sql, params, many, context):
        sent.append(sql)
        return execute(sql, params, many, context)

    with (
        override_settings(CHRONICA={"READ_DATABASES": ["replica"]}),
        connections["replica"].execute_wrapper(seen),
    ):
        assert services.list_chronica(OWNER) == []
    assert sent == []
    assert replicas.stats == {"replica": 0, "primary": 0}


@pytest.mark.django_db(transaction=True, databases=["default", *REPLICA])
def test_the_orms_reads_of_chronicas_models_keep_read_your_writes(monkeypatch):
    """The admin and a project's own queries read chronica's models through the router: to
    the replica while this process has written nothing, to the primary after a write the
    replica has not replayed."""
    if connection.vendor != "postgresql":
        pytest.skip("read replicas are PostgreSQL's: this run is on SQLite")
    from django.db import router

    from chronica import models

    monkeypatch.setattr(replicas, "_written", {})
    monkeypatch.setattr(replicas, "_replayed", {})
    monkeypatch.setattr(replicas, "stats", {"replica": 0, "primary": 0})
    with override_settings(CHRONICA={"READ_DATABASES": ["replica"]}, DATABASE_ROUTERS=ROUTERS):
        assert router.db_for_read(models.Actum) == "replica"
        assert models.Actum.objects.all()._db is None  # routed when it runs
        services.record_acta(OWNER, scenario.acta())
        assert router.db_for_read(models.Actum) == "default"
        assert models.Actum.objects.filter(chronicum_id=CHRONICUM).count() == len(scenario.SEVEN)
        from django.contrib.auth.models import User

        assert router.db_for_read(User) == "default"  # not chronica's: not ours to route
