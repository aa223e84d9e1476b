"""The NOTIFY protocol's names, kept importable from here: they live in
``chronica.stores.listener`` with the listener that receives the NOTIFY."""

from __future__ import annotations

from .listener import (
    FOLLOWED,
    NOTIFY_CHANNEL,
    PG_FOLLOW,
    PG_LISTEN,
    PG_NOTIFY,
    PG_UNFOLLOW,
    notify_if_followed,
)

__all__ = [
    "FOLLOWED",
    "NOTIFY_CHANNEL",
    "PG_FOLLOW",
    "PG_LISTEN",
    "PG_NOTIFY",
    "PG_UNFOLLOW",
    "notify_if_followed",
]
