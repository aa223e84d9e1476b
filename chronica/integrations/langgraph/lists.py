"""A thread's lists of messages, kept as references: each message is one row (and its
acta) of the thread, written once; a channel value is runs of their positions.

``MessageLists`` remembers, per thread, the messages it wrote or read (the objects, by
position) and which message object is at which position, so that a checkpoint of a
long thread is neither serialized again nor read again message by message. What it
remembers holds while the thread's newest message row is the one it last saw: one
indexed query per put and per read checks it (a thread deleted and written again has
new rows, whose ``seq`` is never reused), and anything else starts it afresh.
A message object put before is taken as unchanged while its ID, type, text and tool
calls are (a changed one is serialized again).
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from chronica import services

from .messages import acta_of
from .rows import Rows, digest_of, positions_of, runs_blob

__all__ = ["MessageLists"]

# Threads remembered at once by one saver.
_THREADS = 256


def _fingerprint(message: Any) -> tuple[Any, ...]:
    content = message.content
    calls = getattr(message, "tool_calls", None)
    return (
        message.id,
        type(message),
        content if isinstance(content, str) else repr(content),
        repr(calls) if calls else None,
    )


class _Thread:
    """What one saver remembers of one thread."""

    __slots__ = ("by_identity", "by_key", "by_position", "identity_at", "top")

    def __init__(self, top: tuple[int, int] | None) -> None:
        self.top = top  # (position, seq) of the newest row seen
        self.by_key: dict[tuple[str, str], int] = {}  # (message ID, digest) -> position
        self.by_position: dict[int, tuple[str, bytes]] = {}  # position -> serialized
        # id(object) -> (object, fingerprint, position): the object is kept, so its id
        # is not reused while it is remembered. One object a position, the last one
        # seen (identity_at: position -> its id): every read makes new objects, and a
        # thread read and put turn after turn must not keep each turn's copies.
        self.by_identity: dict[int, tuple[Any, tuple[Any, ...], int]] = {}
        self.identity_at: dict[int, int] = {}

    def remember(self, position: int, message: Any, stored: tuple[str, bytes]) -> None:
        self.by_position[position] = stored
        identity = id(message)
        before = self.identity_at.get(position)
        if before is not None and before != identity:
            self.by_identity.pop(before, None)
        self.identity_at[position] = identity
        self.by_identity[identity] = (message, _fingerprint(message), position)


class MessageLists:
    """The message lists of one saver's threads (see the module's docstring)."""

    def __init__(self) -> None:
        self._threads: collections.OrderedDict[str, _Thread] = collections.OrderedDict()
        self._lock = threading.Lock()

    def forget(self, thread_ids: Iterable[str] | None = None) -> None:
        with self._lock:
            if thread_ids is None:
                self._threads.clear()
            for thread_id in thread_ids or ():
                self._threads.pop(thread_id, None)

    def _thread(self, rows: Rows, thread_id: str) -> _Thread:
        top = rows.top_message(thread_id)
        with self._lock:
            known = self._threads.get(thread_id)
            if known is None or known.top != top:
                known = _Thread(top)
                self._threads[thread_id] = known
                while len(self._threads) > _THREADS:
                    self._threads.popitem(last=False)
            self._threads.move_to_end(thread_id)
            return known

    def refs(
        self,
        rows: Rows,
        owner_id: str,
        thread_id: str,
        messages: Sequence[Any],
        *,
        serde: Any,
        agent: str,
        user_actor: str,
        identity: services.Identity | None = None,
    ) -> bytes:
        """The messages as runs of their positions; the new ones recorded first (their
        acta through ``chronica.services``, their rows), in the caller's transaction."""
        known = self._thread(rows, thread_id)
        positions: list[int | None] = []
        unknown: dict[int, tuple[tuple[str, str], tuple[str, bytes]]] = {}
        for i, message in enumerate(messages):
            hit = known.by_identity.get(id(message))
            if hit is not None and hit[0] is message and hit[1] == _fingerprint(message):
                positions.append(hit[2])
                continue
            stored = serde.dumps_typed(message)
            key = (message.id, digest_of(*stored))
            position = known.by_key.get(key)
            if position is None:
                unknown[i] = (key, stored)
            else:
                known.remember(position, message, stored)
            positions.append(position)
        if unknown:
            found = rows.message_positions(thread_id, [key for key, _ in unknown.values()])
            new: dict[tuple[str, str], int] = {}
            for i, (key, _) in unknown.items():
                if key in found:
                    positions[i] = found[key]
                    known.by_key[key] = found[key]
                    known.remember(found[key], messages[i], unknown[i][1])
                elif key not in new:
                    new[key] = i
            if new:
                per_message = [
                    acta_of(messages[i], thread_id, agent=agent, user_actor=user_actor)
                    for i in new.values()
                ]
                flat = [a for acta in per_message for a in acta]
                writer = services.acting_as(identity) if identity else services.get_chronicarius()
                recorded = writer.record_acta(owner_id, flat) if flat else []
                ids = iter(actum.id for actum in recorded)
                added, top = rows.add_messages(
                    owner_id,
                    thread_id,
                    [
                        (key[0], key[1], *unknown[i][1], [next(ids) for _ in acta])
                        for (key, i), acta in zip(new.items(), per_message, strict=True)
                    ],
                    after=known.top,
                )
                for (key, i), position in zip(new.items(), added, strict=True):
                    known.by_key[key] = position
                    known.remember(position, messages[i], unknown[i][1])
                known.top = top
            for i, (key, _) in unknown.items():
                if positions[i] is None:
                    positions[i] = known.by_key[key]
        return runs_blob([p for p in positions if p is not None])

    def load(
        self, rows: Rows, thread_id: str, blobs: Iterable[bytes], *, serde: Any
    ) -> dict[int, Any]:
        """The messages the reference ``blobs`` name, by position."""
        wanted: set[int] = set()
        for blob in blobs:
            wanted.update(positions_of(blob))
        if not wanted:
            return {}
        known = self._thread(rows, thread_id)
        missing = wanted - known.by_position.keys()
        if missing:
            known.by_position.update(rows.load_messages(thread_id, missing))
        return {p: serde.loads_typed(known.by_position[p]) for p in wanted}
