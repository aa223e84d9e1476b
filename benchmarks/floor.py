"""The floor: what chronica does, written by hand with psycopg and nothing else.

psycopg's defaults (server-side binding, statements prepared after five runs),
autocommit, one connection: the fastest a Python app could reasonably do it, for
the same guarantees and on the same tables (so with the same indexes):

- a write checks the owner, locks the chronicum's row before its acta draw their
  ``seq`` (so acta become visible in ``seq`` order and a batch is contiguous), bumps
  ``last_activity_at``, and stores every column chronica stores for an actum of
  that shape: a new ID, ``call_id``, ``data`` and a token count computed in Python
  with the same formula as chronica's default counter;
- a window checks the owner and reads the same eight columns chronica reads.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Any

import psycopg

_LOCKED = """
WITH c AS (
    UPDATE chronica SET last_activity_at = clock_timestamp()
    WHERE id = %s AND owner_id = %s
    RETURNING id, last_activity_at
)
"""
_RECORD = (
    _LOCKED
    + """
INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at, call_id, data, tokens)
SELECT %s, c.id, %s, %s, %s, %s, c.last_activity_at, %s, %s::jsonb, %s FROM c
RETURNING at
"""
)
_RECORD_BATCH = (
    _LOCKED
    + """
INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at, call_id, data, tokens)
SELECT v.id, c.id, v.kind, v.actor_kind, v.actor, v.content, c.last_activity_at,
       v.call_id, v.data::jsonb, v.tokens
FROM c, unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[],
               %s::text[], %s::bigint[]) WITH ORDINALITY
     AS v(id, kind, actor_kind, actor, content, call_id, data, tokens, n)
ORDER BY v.n
RETURNING at
"""
)
_WINDOW = """
SELECT w.id, w.kind, w.actor_kind, w.actor, w.content, w.at, w.call_id, w.data FROM (
    SELECT a.seq, a.id, a.kind, a.actor_kind, a.actor, a.content, a.at, a.call_id, a.data
    FROM acta a JOIN chronica c ON c.id = a.chronicum_id
    WHERE a.chronicum_id = %s AND c.owner_id = %s AND a.kind = ANY(%s)
    ORDER BY a.seq DESC LIMIT %s
) w ORDER BY w.seq
"""

# The other hand-written form (issue 23): two statements, each prepared by psycopg
# after five runs: the owner's row, then the newest acta of the kinds.
_OWNER = "SELECT 1 FROM chronica WHERE id = %s AND owner_id = %s"
_NEWEST = """
SELECT id, kind, actor_kind, actor, content, at, call_id, data FROM acta
WHERE chronicum_id = %s AND kind = ANY(%s)
ORDER BY seq DESC LIMIT %s
"""


def tokens(content: str) -> int:
    """What a hand-written app would store as a token count: chronica's default formula,
    4 + ceil(UTF-8 bytes / 3.5), written out."""
    return 4 + -(-2 * len(content.encode()) // 7)


class Floor:
    """One psycopg connection doing chronica's calls by hand."""

    def __init__(self, conninfo: str, options: str = "") -> None:
        extra = {"options": options} if options else {}
        self.conn = psycopg.connect(conninfo, autocommit=True, **extra)

    def close(self) -> None:
        self.conn.close()

    def record(
        self, owner_id: str, chronicum_id: str, kind: str, actor_kind: str, actor: str, content: str
    ) -> Any:
        """One statement: lock and bump the owner's chronicum, insert the actum after it."""
        params = [
            chronicum_id,
            owner_id,
            secrets.token_hex(16),
            kind,
            actor_kind,
            actor,
            content,
            "",
            None,
            tokens(content),
        ]
        row = self.conn.execute(_RECORD, params).fetchone()
        if row is None:
            raise LookupError(chronicum_id)
        return row

    def record_batch(
        self, owner_id: str, chronicum_id: str, acta: Sequence[tuple[str, str, str, str]]
    ) -> list[tuple[Any, ...]]:
        """A batch of (kind, actor_kind, actor, content) in one statement and round trip,
        in the given order, contiguous."""
        params = [
            chronicum_id,
            owner_id,
            [secrets.token_hex(16) for _ in acta],
            [a[0] for a in acta],
            [a[1] for a in acta],
            [a[2] for a in acta],
            [a[3] for a in acta],
            ["" for _ in acta],
            [None for _ in acta],
            [tokens(a[3]) for a in acta],
        ]
        rows = self.conn.execute(_RECORD_BATCH, params).fetchall()
        if len(rows) != len(acta):
            raise LookupError(chronicum_id)
        return rows

    def window(
        self, owner_id: str, chronicum_id: str, kinds: Sequence[str], last_n: int
    ) -> list[tuple[Any, ...]]:
        """The last ``last_n`` acta of ``kinds``, oldest first, owner checked, in one query."""
        with self.conn.cursor() as cursor:
            return cursor.execute(_WINDOW, [chronicum_id, owner_id, list(kinds), last_n]).fetchall()

    def window_two(
        self, owner_id: str, chronicum_id: str, kinds: Sequence[str], last_n: int
    ) -> list[tuple[Any, ...]]:
        """The same window in two prepared statements: the owner's row, then the newest
        acta (turned oldest first in Python)."""
        with self.conn.cursor() as cursor:
            if cursor.execute(_OWNER, [chronicum_id, owner_id]).fetchone() is None:
                raise LookupError(chronicum_id)
            rows = cursor.execute(_NEWEST, [chronicum_id, list(kinds), last_n]).fetchall()
        rows.reverse()
        return rows
