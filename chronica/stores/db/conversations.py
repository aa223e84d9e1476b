"""The PydanticAI integration's records on a Django database: the SQL of
``chronica.integrations.pydantic_ai``, under ``stores/`` with the rest of chronica's.

A PydanticAI conversation keeps its messages as the acta of the chronicum named like
it, and its record and entries in two side tables (``chronica.models``). This is the
``chronica.interfaces.ConversationRecordStore`` of a ``DjangoStore``: its database
holds the side tables beside the acta, so that one transaction writes both.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

from django.db import IntegrityError, connections, transaction
from django.db.models import F

from ...interfaces import ConversationChain, ConversationLink
from ...models import PydanticAIConversation, PydanticAIEntry
from .dialects import retry_when_locked

__all__ = ["DjangoConversationRecords"]

ENTRIES = PydanticAIEntry._meta.db_table
CONVERSATIONS = PydanticAIConversation._meta.db_table

# The chain of entries ending at one, newest first, at most %s of them, with the
# conversation's owner, and (on the newest) the actum of the entry written after it.
# The anchor prefers the copy in the conversation being read, else the oldest copy.
# The next entry is found with conversation_id as a range, ordered by (conversation_id,
# seq): PostgreSQL then walks the (conversation_id, seq) index; with an equality it
# orders by seq alone and walks the primary key through every later conversation
# (60 ms instead of 0.1 ms behind a 100k conversation; BENCHMARKS.md).
_CHAIN = f"""
WITH RECURSIVE chain(conversation_id, entry_id, parent_id, actum_id, seq, depth) AS (
    SELECT conversation_id, entry_id, parent_id, actum_id, seq, 1 FROM {ENTRIES}
    WHERE seq = (
        SELECT seq FROM {ENTRIES} WHERE entry_id = %s
        ORDER BY CASE WHEN conversation_id = %s THEN 0 ELSE 1 END, seq LIMIT 1)
    UNION ALL
    SELECT e.conversation_id, e.entry_id, e.parent_id, e.actum_id, e.seq, chain.depth + 1
    FROM chain JOIN {ENTRIES} e
        ON e.conversation_id = chain.conversation_id AND e.entry_id = chain.parent_id
    WHERE chain.depth < %s
)
SELECT chain.conversation_id, c.owner_id, chain.entry_id, chain.parent_id, chain.actum_id,
    chain.seq,
    CASE WHEN chain.depth = 1 THEN (
        SELECT n.actum_id FROM {ENTRIES} n
        WHERE n.conversation_id >= chain.conversation_id
            AND n.conversation_id <= chain.conversation_id AND n.seq > chain.seq
        ORDER BY n.conversation_id, n.seq LIMIT 1) END
FROM chain JOIN {CONVERSATIONS} c ON c.conversation_id = chain.conversation_id
ORDER BY chain.depth DESC
"""
_NEXT_ACTUM = (
    f"SELECT actum_id FROM {ENTRIES} WHERE conversation_id >= %s AND conversation_id <= %s"
    " AND seq > %s ORDER BY conversation_id, seq LIMIT 1"
)
_NO_LIMIT = 2**62
# A bulk insert of entries in pieces: a statement with server-side binding takes at
# most 65,535 parameters.
_ENTRIES_PER_INSERT = 2000


class DjangoConversationRecords:
    """PydanticAI's records and entries on the Django database ``alias``."""

    def __init__(self, alias: str) -> None:
        self.alias = alias

    def __repr__(self) -> str:
        return f"<DjangoConversationRecords alias={self.alias!r}>"

    def in_transaction(self, write: Callable[[], None]) -> None:
        """Run ``write`` in a transaction of its own, or in the caller's; on SQLite, a
        transaction of its own that gave up waiting for the write lock again (the
        store's one retry helper)."""

        def atomic() -> None:
            with transaction.atomic(using=self.alias):
                write()

        retry_when_locked(connections[self.alias], atomic)

    # -- reading -------------------------------------------------------------------

    def record(self, conversation_id: str) -> Any:
        return (
            PydanticAIConversation.objects.using(self.alias)
            .filter(conversation_id=conversation_id)
            .values_list("record", flat=True)
            .first()
        )

    def records(self, scope: str | None, limit: int | None) -> list[Any]:
        rows = PydanticAIConversation.objects.using(self.alias).order_by("-updated_at")
        if scope is not None:
            rows = rows.filter(scope=scope)
        stored = rows.values_list("record", flat=True)
        if limit is not None:
            stored = stored[:limit]
        return list(stored)

    def chain(
        self, head_id: str, limit: int | None, prefer: str | None
    ) -> ConversationChain | None:
        """The entries up to ``head_id`` (the last ``limit``), in one query."""
        depth = _NO_LIMIT if limit is None else limit
        with connections[self.alias].cursor() as cursor:
            cursor.execute(_CHAIN, [head_id, prefer or "", depth])
            rows = cursor.fetchall()
        if not rows:
            return None
        links = [ConversationLink(row[2], row[3], row[4], row[5]) for row in rows]
        return ConversationChain(rows[0][0], rows[0][1], links, rows[-1][6])

    def next_actum(self, conversation_id: str, seq: int) -> str | None:
        with connections[self.alias].cursor() as cursor:
            cursor.execute(_NEXT_ACTUM, [conversation_id, conversation_id, seq])
            row = cursor.fetchone()
        return None if row is None else str(row[0])

    def has_entry(self, conversation_id: str, entry_id: str) -> bool:
        entries = PydanticAIEntry.objects.using(self.alias)
        return entries.filter(conversation_id=conversation_id, entry_id=entry_id).exists()

    # -- writing -------------------------------------------------------------------

    def create(
        self,
        conversation_id: str,
        *,
        owner_id: str,
        scope: str | None,
        revision: str,
        updated_at: dt.datetime,
        record: Any,
    ) -> bool:
        """A new record; ``False`` when the conversation has one already."""
        try:
            with transaction.atomic(using=self.alias):
                PydanticAIConversation.objects.using(self.alias).create(
                    conversation_id=conversation_id,
                    owner_id=owner_id,
                    scope=scope,
                    revision=revision,
                    updated_at=updated_at,
                    record=record,
                )
        except IntegrityError:
            return False
        return True

    def update(
        self,
        conversation_id: str,
        *,
        expected_revision: str,
        scope: str | None,
        revision: str,
        updated_at: dt.datetime,
        record: Any,
    ) -> str | None:
        """The record of ``expected_revision`` replaced: its owner, or ``None`` when the
        conversation has no record of that revision."""
        rows = PydanticAIConversation.objects.using(self.alias)
        current = rows.filter(conversation_id=conversation_id, revision=expected_revision)
        updated = current.update(
            revision=revision, updated_at=updated_at, scope=scope, record=record
        )
        if not updated:
            return None
        return str(rows.values_list("owner_id", flat=True).get(conversation_id=conversation_id))

    def add_entries(
        self, conversation_id: str, entries: Sequence[tuple[str, str | None, str]]
    ) -> None:
        """Entries (entry ID, parent ID, actum ID), in write order."""
        PydanticAIEntry.objects.using(self.alias).bulk_create(
            [
                PydanticAIEntry(
                    conversation_id=conversation_id,
                    entry_id=entry_id,
                    parent_id=parent_id,
                    actum_id=actum_id,
                )
                for entry_id, parent_id, actum_id in entries
            ],
            batch_size=_ENTRIES_PER_INSERT,
        )

    def take(self, conversation_id: str, expected_revision: str) -> str | None:
        """Delete the record of ``expected_revision`` and its entries: its owner, or
        ``None`` when the conversation has no record of that revision."""
        rows = PydanticAIConversation.objects.using(self.alias).filter(
            conversation_id=conversation_id, revision=expected_revision
        )
        # A write first, for the row's lock (on SQLite the database's write lock), so
        # that two writers of one revision queue and the second finds it changed.
        if not rows.update(revision=F("revision")):
            return None
        owner_id = rows.values_list("owner_id", flat=True).get()
        rows.delete()
        return str(owner_id)

    def forget(self, owner_id: str, conversation_id: str) -> None:
        """Drop the record (and entries) of ``owner_id``'s conversation, if any."""
        PydanticAIConversation.objects.using(self.alias).filter(
            conversation_id=conversation_id, owner_id=owner_id
        ).delete()
