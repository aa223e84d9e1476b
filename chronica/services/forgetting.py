"""Forgetting on request: one actum redacted, one owner erased, retention rules
applied (``chronica.stores.db.forgetting`` holds the SQL)."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InvalidQuery
from ..signals import actum_redacted, owner_erased
from ..validation.identifiers import check_owner, check_text, storable
from ..values import Actum, Erasure
from .base import ChronicariusBase, async_twin, send

__all__ = ["MAX_REASON", "Forgetting"]

MAX_REASON = 1000
"""The longest reason a redaction or an erasure keeps."""


def _reason(reason: object) -> str:
    try:
        check_text("reason", reason, limit=MAX_REASON)
    except ValueError as exc:
        raise InvalidQuery(str(exc)) from None
    assert isinstance(reason, str)
    return reason


class Forgetting(ChronicariusBase):
    """What a person may ask chronica to forget."""

    def _forgetting(self, what: str) -> Any:
        return self._require(getattr(self.store, "supports_forget", False), what, "supports_forget")

    def redact_actum(
        self, owner_id: str, chronicum_id: str, actum_id: str, *, reason: str = ""
    ) -> Actum:
        """Empty one actum: its ``content`` becomes ``""``, its ``data`` ``None`` and its
        token count 0, in the table and in every answer; its ID, place, kind, actor
        kind, actor, ``at``, ``call_id`` and ``recorded_by`` stay, and ``redacted`` says
        when and why (``reason``). Repeating it changes nothing (the first ``redacted``
        stays). The owner's call: an agent credential gets ``NotPermitted``. An
        ``actum_id`` that is not an actum of the chronicum is ``InvalidQuery``; someone
        else's chronicum, or a missing one, ``ChronicumNotFound``."""
        check_owner(owner_id)
        store = self._forgetting("redact an actum")
        self._check_ids(owner_id, chronicum_id)
        self._admit(owner_id, chronicum_id, action="redact")
        reason = _reason(reason)
        if not isinstance(actum_id, str):
            raise InvalidQuery(f"actum_id must be a string, not {type(actum_id).__name__}")
        now = dt.datetime.now(dt.UTC)
        actum: Actum | None = (
            store.redact(owner_id, chronicum_id, actum_id, reason=reason, at=now)
            if storable(actum_id)
            else None
        )
        if actum is None:
            self._own(owner_id, chronicum_id)  # ChronicumNotFound where it is not ours
            raise InvalidQuery(f"{actum_id!r} is not an actum of this chronicum")
        newly = actum.redacted is not None and actum.redacted.at == now
        if newly and actum_redacted.has_listeners():
            self._after_commit(
                lambda: send(actum_redacted, self.signal_sender, owner_id=owner_id, actum=actum)
            )
        return actum

    def erase_owner(self, owner_id: str, *, reason: str = "", dry_run: bool = False) -> Erasure:
        """Remove everything chronica keeps of ``owner_id``: every chronicum with its
        acta and state, the owner's shared state, the credentials the owner issued, and
        (through ``chronica.signals.owner_erased``, in the same last transaction) every
        integration's rows. A record stays in ``chronica_erasures``: the SHA-256 of the
        owner ID, when, ``reason`` and the rows removed by table (``Erasure.counts``).

        It works a batch at a time, so no lock is held long. A write for the owner
        racing with it lands before and is erased, or is refused (``ChronicumNotFound``);
        nothing of the owner is left when it returns. An erasure interrupted (a lost
        connection) is taken up again by the next call for the owner. ``dry_run``:
        the rows it would remove, removing nothing. The owner's call (or a trusted
        server-side one): an agent credential gets ``NotPermitted``."""
        check_owner(owner_id)
        store = self._forgetting("erase an owner")
        self._admit(owner_id, action="erase")
        reason = _reason(reason)
        if not isinstance(dry_run, bool):
            raise InvalidQuery(f"dry_run must be True or False, not {dry_run!r}")
        owner_hash = hashlib.sha256(owner_id.encode()).hexdigest()

        def before_commit(dry: bool) -> Mapping[str, int]:
            found: Counter[str] = Counter()
            for _receiver, answer in owner_erased.send(
                self.signal_sender, owner_id=owner_id, owner_hash=owner_hash, dry_run=dry
            ):
                if isinstance(answer, Mapping):
                    found.update({str(k): int(v) for k, v in answer.items()})
            return found

        if not storable(owner_id):
            return Erasure(owner_hash, dt.datetime.now(dt.UTC), reason, {})
        return store.erase(  # type: ignore[no-any-return]
            owner_id, reason=reason, dry_run=dry_run, before_commit=before_commit
        )

    def apply_retention(
        self, *, dry_run: bool = False, rules: Sequence[Mapping[str, Any]] | None = None
    ) -> dict[str, dict[str, int]]:
        """Apply the retention rules (``rules``, else ``CHRONICA["RETENTION"]``), a batch
        at a time, beside concurrent writers: for each rule, by its label (``"redact
        tool_response older than 30d"``), the rows it changed by table (``dry_run``:
        would change, changing nothing). A ``"redact"`` rule empties the acta recorded
        before its cutoff as ``redact_actum`` does (reason ``"retention: <label>"``,
        no ``actum_redacted`` signal); a ``"delete"`` rule removes the chronica whose
        last activity is before it, with their acta. A malformed rule is a ``ValueError``
        (and a system check error)."""
        from ..validation.retention import parse_rules

        if rules is None:
            from ..conf import chronica_settings

            rules = chronica_settings.RETENTION
        parsed = parse_rules(rules)
        if not isinstance(dry_run, bool):
            raise InvalidQuery(f"dry_run must be True or False, not {dry_run!r}")
        if self.identity is not None:
            raise InvalidQuery("retention applies to every owner: a trusted server-side call")
        store = self._forgetting("apply retention") if parsed else None
        done: dict[str, dict[str, int]] = {}
        now = dt.datetime.now(dt.UTC)
        for rule in parsed:
            assert store is not None
            counts = store.expire(
                rule.action,
                now - rule.older_than,
                frozenset(k.value for k in rule.kinds),
                reason=f"retention: {rule.label}",
                dry_run=dry_run,
            )
            label = rule.label
            while label in done:
                label += "'"
            done[label] = dict(counts)
        return done

    aredact_actum = async_twin(redact_actum)
    aerase_owner = async_twin(erase_owner)
    aapply_retention = async_twin(apply_retention)
