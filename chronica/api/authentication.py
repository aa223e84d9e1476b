"""Agents' credentials as a DRF authentication class.

An agent sends ``Authorization: Bearer chr_agent_...`` (its credential's secret,
``chronica.services.issue_credential``). Every chronica viewset tries this class
first, whatever the project's ``DEFAULT_AUTHENTICATION_CLASSES``; a project names it
there too (``"chronica.api.authentication.AgentCredentialAuthentication"``) for its
own views to take agents' credentials. A Bearer token without chronica's prefix is
left to the project's other classes. An unknown, expired or revoked credential is a
401 with ``WWW-Authenticate: Bearer``. What an agent may do is
``chronica.services``' business; this module only says who is calling.
"""

from __future__ import annotations

from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from .. import services
from ..services.credentials import SECRET_PREFIX, InvalidCredential
from ..services.identity import AgentIdentity

__all__ = ["AgentCredentialAuthentication", "AgentUser", "sent_agent_credential"]


class AgentUser:
    """``request.user`` of a request an agent's credential authenticated: signed in, no
    Django user. ``request.auth`` is its ``AgentIdentity``."""

    is_authenticated = True
    is_anonymous = False
    is_active = True
    is_staff = False
    is_superuser = False
    pk = None
    id = None

    def __init__(self, identity: AgentIdentity) -> None:
        self.identity = identity
        self.username = f"agent:{identity.actor}"

    def __str__(self) -> str:
        return f"agent {self.identity.actor} ({self.identity.key_id})"


class AgentCredentialAuthentication(BaseAuthentication):
    """``Authorization: Bearer chr_agent_...``: an agent's credential."""

    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[AgentUser, AgentIdentity] | None:
        header = get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            if len(header) > 2 and header[1].startswith(SECRET_PREFIX.encode()):
                raise AuthenticationFailed("An agent credential holds no space.")
            return None
        try:
            secret = header[1].decode("ascii")
        except UnicodeDecodeError:
            return None
        if not secret.startswith(SECRET_PREFIX):
            return None  # another scheme's bearer token: the project's classes decide
        try:
            identity = services.authenticate_credential(secret)
        except InvalidCredential:
            # Unknown, expired or revoked: the client learns only that it was refused.
            raise AuthenticationFailed(
                "Invalid agent credential (unknown, expired or revoked)."
            ) from None
        return AgentUser(identity), identity

    def authenticate_header(self, request: Request) -> str:
        return f'{self.keyword} realm="chronica"'


def sent_agent_credential(request: Request) -> bool:
    """Whether the request's Authorization is a Bearer secret of chronica's."""
    header = get_authorization_header(request).split()
    return (
        len(header) >= 2
        and header[0].lower() == b"bearer"
        and header[1].startswith(SECRET_PREFIX.encode())
    )
