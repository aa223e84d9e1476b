"""State documents: how a ``StateChange`` applies, the same in every store.

A store keeps the documents; these functions say what a change does to one, so that
``InMemoryStore``, ``DjangoStore`` and any third-party store agree to the key.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .errors import StateConflict
from .values import StateChange, StateScope

__all__ = ["apply", "apply_all", "document_key", "expectations_hold", "namespaces_of"]

Document = dict[str, Any]
DocumentKey = tuple[StateScope, str, str]
"""(scope, namespace, subject): the subject is the chronicum ID, the owner ID, or ""."""


def document_key(change: StateChange, owner_id: str, chronicum_id: str) -> DocumentKey:
    """The document ``change`` applies to, for a write of ``owner_id`` into ``chronicum_id``."""
    if change.scope is StateScope.CHRONICUM:
        return (change.scope, change.namespace, chronicum_id)
    if change.scope is StateScope.OWNER:
        return (change.scope, change.namespace, owner_id)
    return (change.scope, change.namespace, "")


def apply(document: Mapping[str, Any] | None, change: StateChange) -> Document:
    """A new document: ``document`` (``None``: none yet) with ``change`` made to it."""
    new: Document = copy.deepcopy(dict(document)) if document else {}
    target = new
    for key in change.path:
        inner = target.get(key)
        if not isinstance(inner, dict):
            inner = target[key] = {}
        target = inner
    if change.replace:
        target.clear()
    target.update(copy.deepcopy(dict(change.set)))
    return new


def expectations_hold(document: Mapping[str, Any] | None, change: StateChange) -> bool:
    """Whether ``change.expect`` holds on ``document`` as it is before the write."""
    if change.expect is None:
        return True
    document = document or {}
    return all(document.get(key) == value for key, value in change.expect.items())


def apply_all(
    documents: dict[DocumentKey, Document | None],
    changes: Sequence[StateChange],
    owner_id: str,
    chronicum_id: str,
) -> dict[DocumentKey, Document]:
    """The documents ``changes`` touch, as they are after the write (``documents`` holds
    each one as it was, ``None`` for none). ``StateConflict`` if an ``expect`` fails."""
    for change in changes:
        key = document_key(change, owner_id, chronicum_id)
        if not expectations_hold(documents.get(key), change):
            raise StateConflict(
                f"the {change.scope.value} state of {change.namespace!r} is not as expected"
            )
    changed: dict[DocumentKey, Document] = {}
    for change in changes:
        key = document_key(change, owner_id, chronicum_id)
        before = changed[key] if key in changed else documents.get(key)
        changed[key] = apply(before, change)
    return changed


def namespaces_of(changes: Iterable[StateChange]) -> set[str]:
    """The namespaces whose chronicum state ``changes`` name."""
    return {c.namespace for c in changes if c.scope is StateScope.CHRONICUM}
