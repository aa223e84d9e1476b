"""Agent credentials the tests make by hand (``AgentIdentity(...)``), put on file so that
a store that checks a credential where it writes (``DjangoStore``) finds them valid."""

from __future__ import annotations

import datetime as dt

from chronica.services import AgentIdentity


def on_file(*identities: AgentIdentity) -> None:
    """A valid row of ``chronica_agent_credentials`` for each of ``identities``."""
    from chronica.models import AgentCredential

    for identity in identities:
        AgentCredential.objects.update_or_create(
            key_id=identity.key_id,
            defaults={
                "secret_hash": "not a secret of any test",
                "owner_id": identity.owner_id,
                "actor": identity.actor,
                "actor_kinds": sorted(k.value for k in identity.actor_kinds),
                "chronica": None if identity.chronica is None else sorted(identity.chronica),
                "created_at": dt.datetime.now(dt.UTC),
            },
        )
