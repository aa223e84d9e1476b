"""The optional REST API (extra ``chronica[api]``). Include ``chronica.api.urls``."""

from __future__ import annotations

from typing import Any


def owner_id_from_user(user: Any) -> str:
    """The default ``CHRONICA['OWNER_ID']``: the user's primary key as a string."""
    return str(user.pk)
