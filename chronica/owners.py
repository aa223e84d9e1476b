"""Owners and the project's users: which users an owner ID belongs to.

An owner is whatever string ``CHRONICA["OWNER_ID"]`` makes of a user
(``services.owner_id_for``; by default the user's primary key). Where a person issues a
credential by hand (the admin, ``chronica_agent_credential``) they think of users, not
of owner IDs: these functions map one to the other, so that a user name typed where an
owner ID belongs is caught before a credential acts for an owner nobody is.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

__all__ = ["owner_label", "users_of"]


def users_of(owner_id: str) -> list[Any]:
    """The users whose owner ID is ``owner_id`` (usually one, or none)."""
    from . import services
    from .conf import chronica_settings

    user_model = get_user_model()
    users = user_model._default_manager.all()
    if chronica_settings.owner_id_function() is _default_mapping():
        # The default mapping: the owner ID is the primary key, one lookup.
        try:
            pk = user_model._meta.pk.to_python(owner_id)
        except ValidationError:
            return []
        if str(pk) != owner_id:
            return []
        return list(users.filter(pk=pk))
    return [user for user in users.iterator() if services.owner_id_for(user) == owner_id]


def owner_label(user: Any) -> str:
    """A user as a person picks an owner: ``ardian (1)``, the user name and owner ID."""
    from . import services

    return f"{user.get_username()} ({services.owner_id_for(user)})"


def _default_mapping() -> Any:
    from .api import owner_id_from_user

    return owner_id_from_user
