from __future__ import annotations

import os
import socket
from urllib.parse import urlsplit

import pytest


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("CHRONICA_TEST_DB") != "postgres":
        return
    url = os.environ.get("CHRONICA_TEST_PG_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    parts = urlsplit(url)
    try:
        socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 5432), 3).close()
    except OSError as exc:
        pytest.exit(
            f"PostgreSQL is not reachable at {parts.hostname}:{parts.port or 5432} ({exc}).\n"
            "Start it (pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start),"
            " point CHRONICA_TEST_PG_URL at another server, or skip the PostgreSQL run on"
            " purpose with CHRONICA_SKIP_POSTGRES=1.",
            returncode=3,
        )


@pytest.fixture(
    params=["memory", pytest.param("django", marks=pytest.mark.django_db(transaction=True))]
)
def store(request: pytest.FixtureRequest):
    """Every Chronicarius rule runs on the in-memory store and on DjangoStore."""
    if request.param == "memory":
        from chronica.stores.memory import InMemoryStore

        return InMemoryStore()
    from chronica.stores.db import DjangoStore

    return DjangoStore()


@pytest.fixture
def chronicarius(store):
    from chronica.services import Chronicarius

    return Chronicarius(store)


@pytest.fixture
def ardian(django_user_model):
    """The person of the dinner-friday session, as a Django user."""
    return django_user_model.objects.create_user("ardian", password="ardian-password")


@pytest.fixture
def rafa(django_user_model):
    """Someone else, who must never see ardian's sessions."""
    return django_user_model.objects.create_user("rafa", password="rafa-password")
