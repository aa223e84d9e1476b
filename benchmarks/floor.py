"""The floor: what chronica does, written by hand with psycopg and nothing else.

psycopg's defaults (server-side binding, statements prepared after five runs),
autocommit, one connection: the fastest a Python app could reasonably do it.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Any

import psycopg

_OWNER = "SELECT owner_id FROM chronica WHERE id = %s"
_RECORD = """
WITH ins AS (
    INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at)
    VALUES (%s, %s, %s, %s, %s, %s, clock_timestamp())
    RETURNING chronicum_id, at
), upd AS (
    UPDATE chronica SET last_activity_at = GREATEST(chronica.last_activity_at, ins.at)
    FROM ins WHERE chronica.id = ins.chronicum_id
)
SELECT at FROM ins
"""
_WINDOW = """
SELECT w.id, w.kind, w.actor_kind, w.actor, w.content, w.at FROM (
    SELECT a.seq, a.id, a.kind, a.actor_kind, a.actor, a.content, a.at
    FROM acta a JOIN chronica c ON c.id = a.chronicum_id
    WHERE a.chronicum_id = %s AND c.owner_id = %s AND a.kind = ANY(%s)
    ORDER BY a.seq DESC LIMIT %s
) w ORDER BY w.seq
"""


class Floor:
    """One psycopg connection doing chronica's two calls by hand."""

    def __init__(self, conninfo: str) -> None:
        self.conn = psycopg.connect(conninfo, autocommit=True)

    def close(self) -> None:
        self.conn.close()

    def record(
        self, owner_id: str, chronicum_id: str, kind: str, actor_kind: str, actor: str, content: str
    ) -> Any:
        """The owner's SELECT, then one INSERT ... RETURNING that bumps last_activity_at."""
        with self.conn.cursor() as cursor:
            row = cursor.execute(_OWNER, [chronicum_id]).fetchone()
            if row is None or row[0] != owner_id:
                raise LookupError(chronicum_id)
            params = [secrets.token_hex(16), chronicum_id, kind, actor_kind, actor, content]
            return cursor.execute(_RECORD, params).fetchone()

    def window(
        self, owner_id: str, chronicum_id: str, kinds: Sequence[str], last_n: int
    ) -> list[tuple[Any, ...]]:
        """The last ``last_n`` acta of ``kinds``, oldest first, owner checked, in one query."""
        with self.conn.cursor() as cursor:
            return cursor.execute(_WINDOW, [chronicum_id, owner_id, list(kinds), last_n]).fetchall()
