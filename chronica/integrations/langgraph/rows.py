"""Where ``ChronicaSaver`` keeps a thread: this app's tables, on the database Django's
routers choose for them, which must be the one the acta are on (the default database,
with chronica's default store), so that one transaction writes a checkpoint, its
channel values and the acta of its new messages. Its own queries; the acta are written
through ``chronica.services`` only.
"""

from __future__ import annotations

import contextvars
import functools
import hashlib
import json
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ParamSpec, TypeVar

from django.db import OperationalError, connections, router, transaction
from django.db.models import Q

from chronica import ChronicumNotFound, services

from .models import LangGraphBlob, LangGraphCheckpoint, LangGraphMessage, LangGraphWrite

__all__ = [
    "MESSAGES",
    "Rows",
    "closes_its_connection",
    "erase_owner_rows",
    "forget_deleted_thread",
    "keeping_connections",
]

_T = TypeVar("_T")
_P = ParamSpec("_P")
# Set by the asyncio methods: asgiref's thread for sync code lives on, and keeps its
# connection as Django's own async views do.
keeping_connections: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "chronica_langgraph_keep_connections", default=False
)


def closes_its_connection(call: Callable[_P, _T]) -> Callable[_P, _T]:
    """A saver call that closes the database connection it opened, when it runs in a
    thread other than the main one and outside a transaction. LangGraph's sync graph
    puts its checkpoints from the threads of a pool it starts for each run: each
    would otherwise leave a connection open behind it until garbage collection, and a
    few hundred runs exhaust the server's ``max_connections``."""

    @functools.wraps(call)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        connection = connections[router.db_for_write(LangGraphCheckpoint)]
        fresh = connection.connection is None
        try:
            return call(*args, **kwargs)
        finally:
            if (
                fresh
                and not keeping_connections.get()
                and not connection.in_atomic_block
                and threading.current_thread() is not threading.main_thread()
            ):
                connection.close()

    return run


#: The ``type`` of a channel value kept as references to a thread's messages.
MESSAGES = "chronica-messages"
# How often a write starts again when SQLite gave up waiting for its write lock.
_LOCKED_ATTEMPTS = 5
_TAKE_WRITE_LOCK = f"UPDATE {LangGraphMessage._meta.db_table} SET seq = seq WHERE 1 = 0"
_TABLES = (LangGraphWrite, LangGraphBlob, LangGraphMessage, LangGraphCheckpoint)


def _runs(positions: Sequence[int]) -> list[list[int]]:
    """``[1, 2, 3, 7, 8]`` as ``[[1, 3], [7, 8]]``."""
    runs: list[list[int]] = []
    for position in positions:
        if runs and runs[-1][1] + 1 == position:
            runs[-1][1] = position
        else:
            runs.append([position, position])
    return runs


def _positions(runs: Iterable[Sequence[int]]) -> list[int]:
    return [p for start, end in runs for p in range(start, end + 1)]


class Rows:
    """The saver's rows on the database Django routes them to."""

    def __init__(self) -> None:
        self.alias = router.db_for_write(LangGraphCheckpoint)

    def __repr__(self) -> str:
        return f"<Rows alias={self.alias!r}>"

    def in_transaction(self, write: Callable[[], _T]) -> _T:
        """Run ``write`` in one transaction (the Django store's acta join it); inside the
        caller's transaction it joins that one; one of its own that SQLite gave up on
        (the write lock) starts again."""
        connection = connections[self.alias]
        for attempt in range(_LOCKED_ATTEMPTS):
            try:
                with transaction.atomic(using=self.alias):
                    if connection.vendor == "sqlite":
                        # The write lock first: a transaction that reads and then writes
                        # would deadlock with another one doing the same (LangGraph puts
                        # a checkpoint and a task's writes at once, from two threads),
                        # and SQLite answers a deadlock with "locked" at once.
                        with connection.cursor() as cursor:
                            cursor.execute(_TAKE_WRITE_LOCK)
                    return write()
            except OperationalError as exc:
                if (
                    connection.in_atomic_block
                    or "locked" not in str(exc)
                    or attempt == _LOCKED_ATTEMPTS - 1
                ):
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def objects(self, model: Any) -> Any:
        return model.objects.using(self.alias)

    def lock_thread(self, thread_id: str) -> None:
        """Queue the transactions that add messages to one thread: the namespaces of a
        run (a graph and its subgraphs) put at once, and a thread's message positions
        are one sequence. SQLite's transactions queue already (the write lock first)."""
        connection = connections[self.alias]
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                    [f"chronica_langgraph:{thread_id}"],
                )

    # -- messages --------------------------------------------------------------------

    def message_positions(
        self, thread_id: str, keys: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], int]:
        """The positions of the thread's messages among ``keys`` (message ID, digest)."""
        ids = sorted({message_id for message_id, _ in keys})
        found: dict[tuple[str, str], int] = {}
        for start in range(0, len(ids), 1000):
            rows = self.objects(LangGraphMessage).filter(
                thread_id=thread_id, message_id__in=ids[start : start + 1000]
            )
            for message_id, digest, position in rows.values_list(
                "message_id", "digest", "position"
            ):
                found[(message_id, digest)] = position
        return found

    def add_messages(
        self,
        owner_id: str,
        thread_id: str,
        messages: Sequence[tuple[str, str, str, bytes, list[str]]],
        *,
        after: tuple[int, int] | None,
    ) -> tuple[list[int], tuple[int, int] | None]:
        """New messages (message ID, digest, type, bytes, actum IDs) after the thread's
        newest row ``after`` (its position and seq): their positions, and the new
        newest row. Two writers adding to one thread at once: the second one's insert
        breaks the (thread, position) constraint, an ``IntegrityError``."""
        first = (after[0] if after else 0) + 1
        added = self.objects(LangGraphMessage).bulk_create(
            [
                LangGraphMessage(
                    owner_id=owner_id,
                    thread_id=thread_id,
                    position=first + i,
                    message_id=message_id,
                    digest=digest,
                    actum_ids=actum_ids,
                    type=type_,
                    blob=blob,
                )
                for i, (message_id, digest, type_, blob, actum_ids) in enumerate(messages)
            ],
            batch_size=1000,
        )
        last = added[-1]
        top = (last.position, last.seq) if last.seq is not None else self.top_message(thread_id)
        return list(range(first, first + len(messages))), top

    def top_message(self, thread_id: str) -> tuple[int, int] | None:
        """The (position, seq) of the thread's newest message row."""
        top = (
            self.objects(LangGraphMessage)
            .filter(thread_id=thread_id)
            .order_by("-position")
            .values_list("position", "seq")
            .first()
        )
        return None if top is None else (int(top[0]), int(top[1]))

    def load_messages(self, thread_id: str, wanted: set[int]) -> dict[int, tuple[str, bytes]]:
        """The thread's messages (type, bytes) at these positions."""
        rows = self.objects(LangGraphMessage).filter(
            thread_id=thread_id, position__gte=min(wanted), position__lte=max(wanted)
        )
        return {
            position: (type_, bytes(blob))
            for position, type_, blob in rows.values_list("position", "type", "blob")
            if position in wanted
        }

    # -- deleting --------------------------------------------------------------------

    def delete_threads(self, owner_id: str, thread_ids: Sequence[str]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for model in _TABLES:
            deleted, _ = (
                self.objects(model).filter(owner_id=owner_id, thread_id__in=thread_ids).delete()
            )
            counts[model._meta.db_table] = deleted
        return counts

    def delete_checkpoints(self, rows: Sequence[tuple[str, str, str]]) -> None:
        """Delete these checkpoints (thread, namespace, checkpoint ID) and their writes."""
        for start in range(0, len(rows), 300):
            chunk = rows[start : start + 300]
            match = Q()
            for thread_id, checkpoint_ns, checkpoint_id in chunk:
                match |= Q(
                    thread_id=thread_id, checkpoint_ns=checkpoint_ns, checkpoint_id=checkpoint_id
                )
            self.objects(LangGraphWrite).filter(match).delete()
            self.objects(LangGraphCheckpoint).filter(match).delete()


def digest_of(type_: str, blob: bytes) -> str:
    return hashlib.sha256(type_.encode() + b"\0" + blob).hexdigest()


def runs_blob(positions: Sequence[int]) -> bytes:
    return json.dumps(_runs(positions), separators=(",", ":")).encode()


def positions_of(blob: bytes) -> list[int]:
    return _positions(json.loads(blob))


def erase_owner_rows(owner_id: str) -> dict[str, int]:
    """Delete every LangGraph row of ``owner_id`` (checkpoints, channel values, pending
    writes, message references, store items): the rows deleted, by table.

    Meant for ``chronica.signals.owner_erased``, which is sent inside the erasure's
    transaction: the rows go with the owner's chronica, or not at all."""
    from .models import LangGraphItem

    rows = Rows()
    counts: dict[str, int] = {}
    for model in (*_TABLES, LangGraphItem):
        deleted, _ = rows.objects(model).filter(owner_id=owner_id).delete()
        counts[model._meta.db_table] = deleted
    return counts


def erase_owner(
    sender: Any, *, owner_id: str, dry_run: bool = False, **kwargs: Any
) -> dict[str, int]:
    """``chronica.signals.owner_erased``: the owner's LangGraph rows removed in the
    erasure's last transaction (counted only, on a dry run)."""
    if not dry_run:
        return erase_owner_rows(owner_id)
    from .models import LangGraphItem

    rows = Rows()
    return {
        model._meta.db_table: rows.objects(model).filter(owner_id=owner_id).count()
        for model in (*_TABLES, LangGraphItem)
    }


def forget_deleted_thread(sender: Any, *, owner_id: str, chronicum_id: str, **kwargs: Any) -> None:
    """Drop a thread's rows once its chronicum was deleted through chronica (the admin,
    the API, another framework's session). The signal comes after the commit: a thread
    written again under the same ID in between has a chronicum again, and keeps its rows."""
    try:
        services.get_chronicum(owner_id, chronicum_id)
        return
    except ChronicumNotFound:
        pass
    rows = Rows()
    rows.in_transaction(lambda: rows.delete_threads(owner_id, [chronicum_id]))
