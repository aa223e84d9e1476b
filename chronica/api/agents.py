"""Agents on the API: a throttle per credential, and the Chronicarius each request's
calls go to. The authentication class is ``chronica.api.authentication``'s (its names
stay importable from here too)."""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from .. import services
from ..conf import chronica_settings
from ..services.identity import AgentIdentity, OwnerIdentity
from .authentication import AgentCredentialAuthentication, AgentUser, sent_agent_credential

__all__ = [
    "AgentCredentialAuthentication",
    "AgentCredentialThrottle",
    "AgentUser",
    "chronicarius_for",
    "identity_of",
    "sent_agent_credential",
]


class AgentCredentialThrottle(SimpleRateThrottle):
    """``CHRONICA["AGENT_THROTTLE_RATE"]`` requests per credential (``None``: none);
    requests not made with an agent's credential are not counted."""

    scope = "chronica_agent"

    def get_rate(self) -> str | None:
        return chronica_settings.AGENT_THROTTLE_RATE

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        identity = request.auth
        if not isinstance(identity, AgentIdentity):
            return None
        return self.cache_format % {"scope": self.scope, "ident": identity.key_id}


def identity_of(request: Request, owner_id: str) -> AgentIdentity | OwnerIdentity:
    """Who makes the request: an agent's credential, or the owner in person."""
    if isinstance(request.auth, AgentIdentity):
        return request.auth
    return OwnerIdentity(owner_id)


def chronicarius_for(request: Request, owner_id: str) -> services.Chronicarius:
    """The configured Chronicarius acting as the request's caller."""
    return services.acting_as(identity_of(request, owner_id))
