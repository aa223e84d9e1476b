"""Compaction and fork: an agent's shorter history recorded beside the long one, and a
session copied into a new one. Nothing of the source is changed or lost by either."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from ..errors import ChronicumNotFound, InvalidActum, InvalidQuery
from ..validation.identifiers import check_chronicum_id, check_owner, storable
from ..values import Actum, Chronicum, RecordedActa
from .base import ChronicariusBase, async_twin
from .identity import AgentIdentity

__all__ = ["Compaction"]


def _check_through(through: object, *, optional: bool = False) -> str | None:
    if through is None and optional:
        return None
    if not isinstance(through, str) or not through:
        raise InvalidQuery(f"through must be an actum ID (a string), not {through!r}")
    if not storable(through):
        raise InvalidQuery(f"through={through[:40]!r} is not an actum of this chronicum")
    return through


class Compaction(ChronicariusBase):
    """``compact`` and ``fork_chronicum``: what an agent framework does to manage its
    memory, done so that every other reader of the chronicum keeps what it had."""

    def compact(
        self,
        owner_id: str,
        chronicum_id: str,
        acta: Sequence[Actum],
        *,
        through: str,
        idempotency_key: str | None = None,
    ) -> RecordedActa:
        """Record ``acta`` (one or more, usually the summary an agent wrote) as the
        compaction of every actum of the chronicum up to and including the actum
        ``through``, and return them as stored, each with ``compacts`` set to
        ``through``.

        The compacted acta stay stored and unchanged: ``get_acta()`` and every reader
        that does not ask still see them; ``get_acta(compacted=True)`` reads the newest
        compaction's acta followed by the acta recorded after its ``through`` that
        belong to no compaction. The acta are validated and land as ``record_acta``'s do
        (all or none, contiguous, new IDs; a replay of ``idempotency_key`` returns the
        acta first stored, ``replayed`` true); every actum must name ``chronicum_id``.
        ``through`` that is not an actum of the chronicum is a ``ValueError``
        (``InvalidQuery``) with nothing written; a missing chronicum, or another owner's,
        is ``ChronicumNotFound`` (a compaction never creates one).
        """
        check_owner(owner_id)
        self._check_ids(owner_id, chronicum_id)
        checked = _check_through(through)
        assert checked is not None
        if isinstance(acta, Sequence) and not isinstance(acta, str | bytes) and not acta:
            raise InvalidActum("a compaction records one actum or more, not none")
        write = self._prepare(owner_id, acta, idempotency_key)  # type: ignore[attr-defined]
        assert write is not None
        if write.chronicum_id != chronicum_id:
            raise InvalidActum(
                f"the acta name chronicum {write.chronicum_id!r}, not {chronicum_id!r}"
            )
        store = self._require(self._compacting, "compact", "supports_compaction")
        recorded = store.compact(
            owner_id,
            chronicum_id,
            write.acta,
            checked,
            key=write.key,
            tokens=write.tokens,
            credential=(self.identity.key_id if isinstance(self.identity, AgentIdentity) else None),
        )
        if recorded is None:
            raise ChronicumNotFound(chronicum_id)
        recorded = self._announce(owner_id, recorded)  # type: ignore[attr-defined]
        return RecordedActa(recorded.acta, replayed=recorded.replayed)

    def fork_chronicum(
        self,
        owner_id: str,
        chronicum_id: str,
        *,
        through: str | None = None,
        new_id: str | None = None,
    ) -> Chronicum:
        """A new chronicum of the same owner (``new_id``, or a new unguessable one from
        ``id_factory``) holding copies of the acta up to and including the actum
        ``through`` (all of them for ``None``): the same order, kinds, actors, content,
        ``data``, ``call_id``, ``at`` and ``recorded_by``, new actum IDs, no idempotency
        keys. A compaction among them stays one, naming the copy of its ``through``.

        The source is read once, consistently, and left as it was. A missing source, or
        another owner's, is ``ChronicumNotFound``; a ``new_id`` that is taken,
        ``ChronicumExists``; a ``through`` that is not an actum of the source, a
        ``ValueError`` (``InvalidQuery``); nothing is written then. The copies are no
        new writes: no ``actum_recorded`` signal is sent for them.
        """
        check_owner(owner_id)
        self._check_ids(owner_id, chronicum_id)
        through = _check_through(through, optional=True)
        new_id = self.id_factory() if new_id is None else new_id
        check_chronicum_id(new_id)
        self._admit(owner_id, new_id)
        store = self._require(self._forking, "fork a chronicum", "supports_fork")
        now = dt.datetime.now(dt.UTC)
        forked = store.fork(owner_id, chronicum_id, through, Chronicum(new_id, owner_id, now, now))
        if forked is None:
            raise ChronicumNotFound(chronicum_id)
        return forked

    acompact = async_twin(compact)
    afork_chronicum = async_twin(fork_chronicum)
