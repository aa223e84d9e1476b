"""What the in-memory store keeps of a chronicum, and what its parts share."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

from ...interfaces import BaseStore
from ...states import DocumentKey
from ...values import Actum, Chronicum, Erasure

__all__ = ["Entry", "MemoryBase"]


@dataclasses.dataclass
class Entry:
    chronicum: Chronicum
    acta: list[Actum] = dataclasses.field(default_factory=list)
    tokens: dict[str, int] = dataclasses.field(default_factory=dict)
    # key -> the IDs of the batch that key recorded, in write order
    keys: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    # the follow position of each actum, in step with ``acta``
    positions: list[int] = dataclasses.field(default_factory=list)
    # the chronicum's state and the namespace it is in (None: it has none)
    namespace: str | None = None
    state: dict[str, Any] | None = None
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)


class MemoryBase(BaseStore):
    """The in-memory store's state, for the modules that each hold a part of its abilities."""

    _lock: threading.Lock
    _entries: dict[str, Entry]
    _shared: dict[DocumentKey, dict[str, Any]]
    _shared_lock: threading.Lock
    erasures: list[Erasure]

    def _locked(self, owner_id: str | None, chronicum_id: str) -> Entry | None:
        """The entry of ``owner_id``'s chronicum, its lock held; ``None`` otherwise."""
        raise NotImplementedError
