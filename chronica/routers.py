"""A database router for chronica's reads from PostgreSQL replicas.

List it in ``DATABASE_ROUTERS`` and name the replicas in ``CHRONICA["READ_DATABASES"]``::

    DATABASE_ROUTERS = ["chronica.routers.ReplicaRouter"]
    CHRONICA = {"READ_DATABASES": ["replica"]}

Reads of chronica's tables (windows, listings, ``get_chronicum``, and the ORM's reads of
chronica's models, the admin's among them) then go to a replica that has replayed this
process's newest write, and to the primary otherwise (``chronica.stores.db.replicas``):
read-your-writes holds for every request, task and thread of the process. Writes are left
to the other routers (the primary). Put it before a router of your own that sends reads
to replicas: the first router that answers wins, and only this one waits for the replay.
"""

from __future__ import annotations

from typing import Any

from django.db import DEFAULT_DB_ALIAS, router

from .stores.db import replicas

__all__ = ["ReplicaRouter"]


def _chronicas(model: type[Any]) -> bool:
    """A model of chronica or of one of its integrations' apps."""
    name = model._meta.app_config.name if model._meta.app_config else ""
    return name == "chronica" or name.startswith("chronica.")


class ReplicaRouter:
    """Sends reads of chronica's models to a caught-up ``CHRONICA["READ_DATABASES"]``
    replica; says nothing of any other model, of writes, relations or migrations."""

    def db_for_read(self, model: type[Any], **hints: Any) -> str | None:
        if not replicas.read_aliases() or not _chronicas(model):
            return None
        return replicas.choose(router.db_for_write(model, **hints) or DEFAULT_DB_ALIAS)
