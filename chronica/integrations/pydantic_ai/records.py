"""Where a PydanticAI conversation keeps its record and its entries: this app's two
tables, on the database Django's routers choose for them, which must be the one the
acta are on (the default database, with chronica's default store), so that one
transaction writes both. Its own SQL; the acta are written and read through
``chronica.services`` only.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

from django.db import IntegrityError, OperationalError, connections, router, transaction
from django.db.models import F

from chronica import ChronicumNotFound, services

from .models import PydanticAIConversation, PydanticAIEntry

__all__ = ["ConversationChain", "ConversationLink", "Records", "forget_deleted_conversation"]


@dataclasses.dataclass(frozen=True, slots=True)
class ConversationLink:
    """One entry of a conversation: the entry, its parent, the actum that holds its
    message, and its place in write order."""

    entry_id: str
    parent_id: str | None
    actum_id: str
    seq: int


@dataclasses.dataclass(frozen=True, slots=True)
class ConversationChain:
    """A chain of entries, oldest first, in the conversation that holds it; ``after``
    is the actum of the entry written after the newest link, if any."""

    conversation_id: str
    owner_id: str
    links: list[ConversationLink]
    after: str | None


# How often a write of ours starts again when SQLite gave up waiting for its write
# lock (a busy machine with many writers can wait past the busy timeout).
_LOCKED_ATTEMPTS = 5

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


class Records:
    """PydanticAI's records and entries on the database Django routes them to."""

    def __init__(self) -> None:
        self.alias = router.db_for_write(PydanticAIConversation)

    def __repr__(self) -> str:
        return f"<Records alias={self.alias!r}>"

    def in_transaction(self, write: Callable[[], None]) -> None:
        """Run ``write`` in one transaction: its records and the acta it records
        through ``chronica.services`` (the Django store joins the transaction) commit
        together, or not at all. Inside the caller's transaction, it joins that one; a
        transaction of its own that SQLite gave up on (the write lock) starts again."""
        connection = connections[self.alias]
        for attempt in range(_LOCKED_ATTEMPTS):
            try:
                with transaction.atomic(using=self.alias):
                    write()
                return
            except OperationalError as exc:
                if (
                    connection.in_atomic_block
                    or "locked" not in str(exc)
                    or attempt == _LOCKED_ATTEMPTS - 1
                ):
                    raise

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


def forget_deleted_conversation(
    sender: Any, *, owner_id: str, chronicum_id: str, **kwargs: Any
) -> None:
    """Drop the record (and entries) of a conversation whose chronicum was deleted
    through chronica (the admin, the API, a session of another framework).

    The signal comes after the commit: a conversation saved again under the same ID in
    between has a chronicum again, and keeps its new record.
    """
    try:
        services.get_chronicum(owner_id, chronicum_id)
        return
    except ChronicumNotFound:
        pass
    Records().forget(owner_id, chronicum_id)


def erase_owner_rows(
    sender: Any, *, owner_id: str, dry_run: bool = False, **kwargs: Any
) -> dict[str, int]:
    """``chronica.signals.owner_erased``: the owner's conversation records and their
    entries, removed in the erasure's last transaction (counted only, on a dry run)."""
    alias = router.db_for_write(PydanticAIConversation)
    mine = PydanticAIConversation.objects.using(alias).filter(owner_id=owner_id)
    entries = PydanticAIEntry.objects.using(alias).filter(conversation__owner_id=owner_id)
    if dry_run:
        return {
            PydanticAIEntry._meta.db_table: entries.count(),
            PydanticAIConversation._meta.db_table: mine.count(),
        }
    return {
        PydanticAIEntry._meta.db_table: entries._raw_delete(alias),
        PydanticAIConversation._meta.db_table: mine._raw_delete(alias),
    }
