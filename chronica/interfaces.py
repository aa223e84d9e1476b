"""The store contract. Structural: a store inherits nothing, it only has the methods.

``Store`` is what every store must have. The other protocols are capabilities a
store may add; Chronicarius asks for each with ``isinstance`` once, and a call
that needs a capability the store lacks raises ``StoreUnsupported`` (or, where it
says so, takes a documented slower way). ``chronica.storeconformance`` has the
cases that specify each of them.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from .values import (
    ActaQuery,
    Actum,
    Chronicum,
    NamespaceListing,
    Recorded,
    StateChange,
    StateView,
)

__all__ = [
    "AsyncStateStore",
    "AsyncStore",
    "BatchStore",
    "ConversationChain",
    "ConversationLink",
    "ConversationRecordStore",
    "DeletingStore",
    "FollowingStore",
    "IdempotentStore",
    "ListingStore",
    "NotifyingStore",
    "OwnerScopedStore",
    "PagingStore",
    "PoppingStore",
    "StateStore",
    "Store",
    "Subscription",
    "TransactionalStore",
    "WindowStore",
]


@runtime_checkable
class Store(Protocol):
    """Plain persistence for chronica and their acta. A store checks no owner and no actum.

    Promises (``chronica.storeconformance`` tests each of them):

    * ``create`` stores the chronicum as given; a taken ID raises ``ChronicumExists``.
    * ``record`` appends the actum keeping its ``id``, sets ``at`` to the moment it
      writes, bumps the chronicum's ``last_activity_at`` to that same moment and
      returns the full stored actum. A missing chronicum raises ``ChronicumNotFound``.
    * ``acta`` returns the acta in the order ``record`` was called (never by ``at``),
      filtered by every filter of ``query`` first (``chronica.windows.passes`` says
      which pass), then cut to the last ``query.last_n`` (``<= 0`` = all). A missing
      chronicum raises ``ChronicumNotFound``, never an empty list.
    * ``get`` returns the chronicum or raises ``ChronicumNotFound``.
    * Concurrent ``record`` calls all land, none twice.
    * One ``create`` wins an ID, and nothing a plain store does changes a chronicum's
      owner afterwards: Chronicarius checks the owner of a store with only these four
      methods with ``get`` and then records, which is safe only while the owner it saw
      stays the owner. A store that can lose a chronicum (``DeletingStore``, or a
      delete behind chronica's back) must check the owner in the same step as it
      appends and reads: ``OwnerScopedStore``.
    """

    def create(self, chronicum: Chronicum) -> None: ...

    def record(self, actum: Actum) -> Actum: ...

    def acta(self, chronicum_id: str, query: ActaQuery) -> list[Actum]: ...

    def get(self, chronicum_id: str) -> Chronicum: ...


@runtime_checkable
class IdempotentStore(Store, Protocol):
    """A store that can record an actum at most once per key and chronicum.

    ``record_idempotent`` with a key already used in that chronicum returns the
    actum stored the first time and writes nothing (the stored actum wins, the new
    payload is discarded). Many concurrent calls with one key store exactly one
    actum and all of them return it.
    """

    def record_idempotent(self, actum: Actum, key: str) -> Actum: ...


@runtime_checkable
class BatchStore(Protocol):
    """A store that records several acta of one chronicum as one write.

    ``record_batch`` appends ``acta`` (all of one chronicum, not empty) all or none,
    one after the other in the given order with no other actum between them, every
    one with the same ``at`` (the moment of the write, also the chronicum's new
    ``last_activity_at``), and returns ``Recorded(stored acta, replayed=False)``.
    With a ``key`` already used in that chronicum, it writes nothing and returns
    ``Recorded(the acta that call stored and that are still there, replayed=True)``;
    many concurrent calls with one key store exactly one batch. ``tokens[i]`` is the
    token count of ``acta[i]`` for windows with ``max_tokens`` (``None``: not
    counted). A missing chronicum raises ``ChronicumNotFound``.
    """

    def record_batch(
        self, acta: Sequence[Actum], key: str | None, tokens: Sequence[int | None]
    ) -> Recorded: ...


@runtime_checkable
class WindowStore(Protocol):
    """A store whose ``acta`` honours every field of ``ActaQuery``.

    Besides the filters and ``last_n``: ``before`` (an actum ID) keeps only acta
    recorded before that actum, and raises ``InvalidQuery`` if it is not an actum of
    the chronicum; ``max_tokens`` keeps the newest acta whose token counts add up to
    at most that many, stopping at the first that does not fit. An actum's count is
    the one ``record_batch`` was given, else ``count_tokens_fallback``'s estimate.
    Without this capability Chronicarius reads the filtered acta and cuts them itself.
    """

    supports_windows: bool


@runtime_checkable
class ListingStore(Protocol):
    """``list_chronica`` returns the chronica of ``owner_id``, latest
    ``last_activity_at`` first, ties by ID (ascending), at most ``limit`` of them,
    starting after ``after`` (the last chronicum of the previous page) when given."""

    def list_chronica(
        self, owner_id: str, limit: int, after: Chronicum | None
    ) -> list[Chronicum]: ...


@runtime_checkable
class DeletingStore(Protocol):
    """``delete`` removes the chronicum and every actum of it, if it belongs to
    ``owner_id``; else it raises ``ChronicumNotFound`` and removes nothing. A record
    racing with it lands before the delete (and goes with it) or raises
    ``ChronicumNotFound`` after it, never a database error.

    After a delete the ID is anyone's: another owner may create it at once. So
    Chronicarius deletes only through a store that is an ``OwnerScopedStore`` too, and
    writes and reads through it only with the owner checked in the same step."""

    def delete(self, chronicum_id: str, owner_id: str) -> None: ...


@runtime_checkable
class PoppingStore(Protocol):
    """``pop`` removes and returns the newest actum (in write order) of the chronicum
    of ``owner_id``, or ``None`` if it has none; ``ChronicumNotFound`` if there is no
    such chronicum of that owner. Two concurrent pops never return the same actum."""

    def pop(self, chronicum_id: str, owner_id: str) -> Actum | None: ...


@runtime_checkable
class OwnerScopedStore(Protocol):
    """The owner's check and the read or the write in one step, atomic with it
    (``DjangoStore`` does each in one SQL statement, ``InMemoryStore`` under the
    chronicum's lock): no delete and re-create by another owner can come between.

    Both answer ``None``, having read and written nothing, where the chronicum is
    missing or belongs to another owner. Chronicarius then creates a missing one
    (``get``, ``create``) and writes through ``record_batch_if_owner`` again, so every
    write into such a store is owner-checked where it appends. Otherwise they behave
    exactly as ``record_batch`` and ``acta``. They check nothing else: every rule
    stays in Chronicarius. A store that deletes must have this capability.
    """

    def record_batch_if_owner(
        self,
        owner_id: str,
        acta: Sequence[Actum],
        key: str | None,
        tokens: Sequence[int | None],
    ) -> Recorded | None: ...

    def acta_if_owner(
        self, owner_id: str, chronicum_id: str, query: ActaQuery
    ) -> list[Actum] | None: ...


@runtime_checkable
class PagingStore(Protocol):
    """A window and, from the same read, whether an older page exists.

    ``acta_page_if_owner`` answers exactly as ``OwnerScopedStore.acta_if_owner``
    (``None`` for a missing chronicum or another owner's), and with the window
    whether an actum recorded before the window's oldest passes the query's filters
    (``False`` for an empty window). Both come from one consistent read
    (``DjangoStore``: one statement; ``InMemoryStore``: under the chronicum's lock),
    so that a write, a pop or a delete between two reads can never make a page
    point at an actum that is gone. Without this capability Chronicarius reads
    twice, and answers the page of the first read where the second finds it gone.
    """

    def acta_page_if_owner(
        self, owner_id: str, chronicum_id: str, query: ActaQuery
    ) -> tuple[list[Actum], bool] | None: ...


@runtime_checkable
class StateStore(Protocol):
    """State beside the acta: JSON documents written in the same transaction as acta.

    Three kinds of document (``chronica.StateScope``), each a JSON object: a
    chronicum's own state (one per chronicum, in the one namespace its first change
    names; it goes with the chronicum); an owner's state in a namespace; and a
    namespace's state, shared by every owner who writes into that namespace. How a
    change applies is ``chronica.states.apply_all``, the same for every store.

    * ``write_state`` appends ``acta`` (may be empty) to the chronicum of
      ``owner_id`` and makes ``changes`` in one transaction, the owner checked in
      the same step: ``None``, having written nothing, where the chronicum is
      missing or another owner's. With ``create``, that chronicum is created first,
      in the same transaction (``ChronicumExists`` if the ID is taken). A keyed
      write that is a replay writes nothing, changes no state and returns the
      replay. An ``expect`` that does not hold, or a chronicum state named under a
      namespace other than its own: ``StateConflict``, nothing written. Concurrent
      writes into one chronicum or one document apply one after the other, none lost.
    * ``read_state`` reads the chronicum of ``owner_id`` (when ``chronicum_id`` is
      given; ``None`` where it is missing or another owner's), its state in
      ``namespace``, ``owner_id``'s state and the namespace's state, and with a
      ``query`` the window of the chronicum's acta, as one consistent read.
    * ``list_namespace`` lists the chronica whose state is in ``namespace`` (only
      ``owner_id``'s when given), with their state, oldest ``last_activity_at``
      first, ties by owner then ID; the owner states of the owners listed; and the
      namespace state.
    """

    def write_state(
        self,
        owner_id: str,
        chronicum_id: str,
        acta: Sequence[Actum],
        key: str | None,
        tokens: Sequence[int | None],
        changes: Sequence[StateChange],
        create: Chronicum | None,
    ) -> Recorded | None: ...

    def read_state(
        self,
        owner_id: str,
        namespace: str,
        chronicum_id: str | None,
        query: ActaQuery | None,
    ) -> StateView: ...

    def list_namespace(self, namespace: str, owner_id: str | None) -> NamespaceListing: ...


@runtime_checkable
class AsyncStateStore(Protocol):
    """A ``StateStore`` whose state reads have an asyncio path of their own, used by
    ``aget_state`` and ``alist_namespace`` where the store is also an ``AsyncStore``
    whose ``supports_async()`` holds: ``aread_state`` and ``alist_namespace`` behave
    exactly like ``read_state`` and ``list_namespace``, without a worker thread."""

    async def aread_state(
        self,
        owner_id: str,
        namespace: str,
        chronicum_id: str | None,
        query: ActaQuery | None,
    ) -> StateView: ...

    async def alist_namespace(self, namespace: str, owner_id: str | None) -> NamespaceListing: ...


@runtime_checkable
class TransactionalStore(Protocol):
    """A store whose writes may sit inside a caller's transaction. ``on_commit`` runs
    ``callback`` once that transaction commits (at once when there is none), never
    after a rollback. Chronicarius sends its signals through it; a store without it
    has committed by the time a write returns."""

    def on_commit(self, callback: Callable[[], None]) -> None: ...


@runtime_checkable
class FollowingStore(Protocol):
    """A store that followers read forward from a position (``afollow``).

    A position is an int that grows with write order within a chronicum, and the
    acta of a chronicum become visible in position order: no reader ever sees an
    actum before an older one of the same chronicum. So a follower that resumes
    from the last position it read misses none.

    * ``follow_position``: the position of the actum ``after`` (``InvalidQuery`` if
      it is not an actum of the chronicum) or, with ``None``, of the newest actum
      now (0 when there is none).
    * ``acta_after``: oldest first, at most ``limit`` acta recorded after
      ``position`` that pass the filters of ``query``, and the position to read
      from next; every actum between the two that passes the filters is returned.
      With ``query.max_bytes`` it may stop earlier, where the UTF-8 bytes of content
      and data would pass it (the first actum always comes), and then answers a third
      item, ``True``: the follower reads on at once (the API's stream, so that a
      backlog is never read whole). A store that ignores ``max_bytes`` answers two.

    Both answer ``None``, having read no actum, where the chronicum is missing or
    is not ``owner_id``'s.
    """

    def follow_position(
        self, owner_id: str, chronicum_id: str, after: str | None
    ) -> int | None: ...

    def acta_after(
        self, owner_id: str, chronicum_id: str, query: ActaQuery, position: int, limit: int
    ) -> tuple[list[Actum], int] | tuple[list[Actum], int, bool] | None: ...


class Subscription(Protocol):
    """Wake-ups for one follower of one chronicum."""

    async def wait(self, timeout: float) -> None:
        """Return once the chronicum may have new acta since the last ``wait``
        returned (or since the subscription began), or after ``timeout`` seconds."""

    def close(self) -> None: ...


@runtime_checkable
class NotifyingStore(Protocol):
    """A FollowingStore that wakes its followers when a chronicum changes, so that
    they need not poll. ``subscribe`` is called in the follower's event loop;
    ``None`` means no notifications here, and the follower polls."""

    def subscribe(self, chronicum_id: str) -> Subscription | None: ...


@runtime_checkable
class AsyncStore(Protocol):
    """A store with an asyncio path of its own, so that the ``a*`` calls of
    Chronicarius need no worker thread.

    ``supports_async()`` says whether that path works here (``DjangoStore``: on
    PostgreSQL with psycopg_pool installed); where it does not, Chronicarius runs
    the sync methods in a thread, as for any store. Each ``a*`` method behaves
    exactly like its sync namesake (``get``, ``record_batch_if_owner``,
    ``acta_if_owner``, ``follow_position``, ``acta_after``), and a write has
    committed when it returns (no caller's transaction can hold it).
    """

    def supports_async(self) -> bool: ...

    async def aget(self, chronicum_id: str) -> Chronicum: ...

    async def arecord_batch_if_owner(
        self,
        owner_id: str,
        acta: Sequence[Actum],
        key: str | None,
        tokens: Sequence[int | None],
    ) -> Recorded | None: ...

    async def aacta_if_owner(
        self, owner_id: str, chronicum_id: str, query: ActaQuery
    ) -> list[Actum] | None: ...

    async def afollow_position(
        self, owner_id: str, chronicum_id: str, after: str | None
    ) -> int | None: ...

    async def aacta_after(
        self, owner_id: str, chronicum_id: str, query: ActaQuery, position: int, limit: int
    ) -> tuple[list[Actum], int] | tuple[list[Actum], int, bool] | None: ...


# -- the records of an agent framework beside the acta ---------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class ConversationLink:
    """One entry of a PydanticAI conversation as its store keeps it: the entry, its
    parent, the actum that holds its message, and its place in write order."""

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


@runtime_checkable
class ConversationRecordStore(Protocol):
    """Where ``chronica.integrations.pydantic_ai`` keeps a conversation's record (a JSON
    value) and its entries (each naming the actum of its message), beside the acta.

    A write of the integration is ``in_transaction(write)``: the record, the entries
    and the acta ``write`` records through ``chronica.services`` commit together, so
    the records live on the store's own database. Got from ``services`` with
    ``conversation_records()``; ``chronica.stores.db.DjangoStore`` has it.
    """

    def in_transaction(self, write: Callable[[], None]) -> None: ...
    def record(self, conversation_id: str) -> Any: ...
    def records(self, scope: str | None, limit: int | None) -> list[Any]: ...
    def chain(
        self, head_id: str, limit: int | None, prefer: str | None
    ) -> ConversationChain | None: ...
    def next_actum(self, conversation_id: str, seq: int) -> str | None: ...
    def has_entry(self, conversation_id: str, entry_id: str) -> bool: ...
    def create(
        self,
        conversation_id: str,
        *,
        owner_id: str,
        scope: str | None,
        revision: str,
        updated_at: dt.datetime,
        record: Any,
    ) -> bool: ...
    def update(
        self,
        conversation_id: str,
        *,
        expected_revision: str,
        scope: str | None,
        revision: str,
        updated_at: dt.datetime,
        record: Any,
    ) -> str | None: ...
    def add_entries(
        self, conversation_id: str, entries: Sequence[tuple[str, str | None, str]]
    ) -> None: ...
    def take(self, conversation_id: str, expected_revision: str) -> str | None: ...
    def forget(self, owner_id: str, conversation_id: str) -> None: ...
