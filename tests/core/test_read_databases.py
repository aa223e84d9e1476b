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

    with override_settings(CHRONICA={"READ_DATABASES": ["replica"]}):
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
        override_settings(CHRONICA={"READ_DATABASES": ["replica"]}),
        connections["replica"].execute_wrapper(seen),
    ):
        answer = client.get(f"/api/chronica/{CHRONICUM}/acta/?last_n=3")
    assert answer.status_code == 200, answer.content
    assert [a["id"] for a in answer.json()] == [a.id for a in written[-3:]]
    assert replicas.stats == {"replica": 1, "primary": 0}
    assert [sql for sql in sent if "FROM acta" in sql], sent
