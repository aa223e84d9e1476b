"""PostgreSQL: how a write wakes the followers of its chronicum (the NOTIFY protocol).

A write into a chronicum that some process follows sends NOTIFY on the channel
``chronica``, with the chronicum's ID as payload (never an actum's content), inside
the writing transaction: only a commit wakes a follower, once the acta are visible.

Only when followed: PostgreSQL serializes the commits of all notifying transactions
of a database (the notification queue's lock is held until the commit is flushed),
which costs concurrent writes dearly (BENCHMARKS.md, case concurrency). A process that
follows a chronicum holds, on its LISTEN connection, a shared advisory lock
(``FOLLOWED``, hashtext(id)). A write tries to take that lock exclusively until it
commits: if it can, nobody follows and it sends nothing; if it cannot, it sends the
NOTIFY. A listener gets its shared lock only once every write that sent none has
committed, and then wakes its followers, who read those writes. (The writes of a
chronicum are already serialized by its row lock; two chronica whose IDs hash alike
only cost an extra NOTIFY.)
"""

from __future__ import annotations

__all__ = [
    "FOLLOWED",
    "NOTIFY_CHANNEL",
    "PG_FOLLOW",
    "PG_LISTEN",
    "PG_NOTIFY",
    "PG_UNFOLLOW",
    "notify_if_followed",
]

NOTIFY_CHANNEL = "chronica"
FOLLOWED = 0x63726F6E
"""The first key of the advisory lock a follower holds (the second: hashtext(id))."""

PG_LISTEN = f"LISTEN {NOTIFY_CHANNEL}"
PG_FOLLOW = f"SELECT pg_try_advisory_lock_shared({FOLLOWED}, hashtext(%s))"
PG_UNFOLLOW = f"SELECT pg_advisory_unlock_shared({FOLLOWED}, hashtext(%s))"
PG_NOTIFY = "SELECT pg_notify(%s, %s)"
"""Wake every follower of a chronicum (parameters: the channel and its ID), as a
delete does whether followed or not."""


def notify_if_followed(chronicum_id: str) -> str:
    """An expression (true) that sends the NOTIFY unless the write can take the
    chronicum's ``FOLLOWED`` lock (COALESCE evaluates its arguments in order, the
    NOTIFY only when needed). pg_notify() returns void: cast, it is an empty text.
    ``chronicum_id`` is the SQL of the chronicum's ID."""
    return (
        f"COALESCE(CASE WHEN pg_try_advisory_xact_lock({FOLLOWED}, hashtext({chronicum_id}))"
        f" THEN true END, pg_notify('{NOTIFY_CHANNEL}', {chronicum_id})::text IS NOT NULL)"
    )
