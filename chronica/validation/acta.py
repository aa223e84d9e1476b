"""The acta and state changes of a write, checked before a store is touched."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..errors import InvalidActum
from ..values import ActorKind, Actum, ActumKind, StateChange, StateScope
from .identifiers import check_chronicum_id, check_identifier, check_text
from .jsondata import check_json, dumps_data

DEFAULT_MAX_ACTUM_BYTES = 4 * 1024 * 1024
"""The default limit of ``content`` plus the JSON of ``data``, in bytes of UTF-8."""

_TOOL_KINDS = (ActumKind.TOOL_REQUEST, ActumKind.TOOL_RESPONSE)
_KNOWN_KINDS = ", ".join(k.value for k in ActumKind)
_KNOWN_ACTOR_KINDS = ", ".join(k.value for k in ActorKind)


def check_actum(
    owner_id: str, actum: object, key: str | None, max_bytes: int | None = DEFAULT_MAX_ACTUM_BYTES
) -> Actum:
    """Refuse what no store could keep the same way, before the store is touched."""
    if not isinstance(actum, Actum):
        raise InvalidActum(f"actum must be a chronica.Actum, not {type(actum).__name__}")
    check_identifier("owner_id", owner_id)
    check_chronicum_id(actum.chronicum_id)
    check_identifier("actor", actum.actor)
    if actum.actor == "":
        raise InvalidActum("actor is empty")
    if not isinstance(actum.kind, ActumKind):
        raise InvalidActum(f"unknown kind {actum.kind!r} (known: {_KNOWN_KINDS})")
    if not isinstance(actum.actor_kind, ActorKind):
        raise InvalidActum(f"unknown actor_kind {actum.actor_kind!r} (known: {_KNOWN_ACTOR_KINDS})")
    check_text("content", actum.content, limit=None)
    if actum.content == "" and actum.kind in (ActumKind.MESSAGE, ActumKind.THOUGHT):
        raise InvalidActum(f"content is empty (a {actum.kind.value} needs content)")
    check_identifier("call_id", actum.call_id)
    if actum.call_id and actum.kind not in _TOOL_KINDS:
        raise InvalidActum(
            f"a {actum.kind.value} cannot carry a call_id; only a tool_request or a"
            " tool_response can"
        )
    size = len(actum.content.encode()) if max_bytes is not None else 0
    if actum.data is not None:
        try:
            check_json(actum.data)
        except RecursionError:
            raise InvalidActum("data is nested too deeply") from None
        if max_bytes is not None:
            size += len(dumps_data(actum.data).encode())
    if max_bytes is not None and size > max_bytes:
        raise InvalidActum(
            f"content and data are {size} bytes of UTF-8, more than the limit of {max_bytes}"
            " (CHRONICA['MAX_ACTUM_BYTES'])"
        )
    if key is not None:
        check_identifier("idempotency_key", key)
    return actum


def check_batch(
    owner_id: str,
    acta: object,
    key: str | None,
    max_bytes: int | None = DEFAULT_MAX_ACTUM_BYTES,
) -> list[Actum]:
    """Every actum of a batch, checked before any is written; all of one chronicum."""
    if isinstance(acta, Actum | str | bytes | dict) or not isinstance(acta, Iterable):
        raise InvalidActum(f"acta must be a list of chronica.Actum, not {type(acta).__name__}")
    batch = list(acta)
    for position, actum in enumerate(batch):
        try:
            check_actum(owner_id, actum, key, max_bytes)
        except InvalidActum as exc:
            if len(batch) == 1:
                raise
            raise InvalidActum(f"actum {position}: {exc}") from None
    chronicum_ids = {actum.chronicum_id for actum in batch}
    if len(chronicum_ids) > 1:
        raise InvalidActum(
            "a batch goes into one chronicum; these acta name "
            + ", ".join(repr(c) for c in sorted(chronicum_ids))
        )
    return batch


def normalize_key(key: object) -> str | None:
    """An empty key is no key."""
    if key is None or key == "":
        return None
    return key  # type: ignore[return-value]


def check_token_count(count: object, actum: Actum) -> int:
    """What a token counter returned: an integer of 0 or more."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise TypeError(
            f"the token counter returned {count!r} for an actum of kind {actum.kind};"
            " it must return an int of 0 or more"
        )
    return count


def check_state_changes(changes: object, max_bytes: int | None) -> list[StateChange]:
    """Every ``StateChange`` of a write, checked before anything is written: a
    namespace chronica can keep, string keys, JSON values, at most ``max_bytes``
    (``CHRONICA["MAX_ACTUM_BYTES"]``) of JSON each, one namespace for the chronicum."""
    if isinstance(changes, StateChange | str | bytes | dict) or not isinstance(changes, Iterable):
        raise InvalidActum(
            f"state must be a list of chronica.StateChange, not {type(changes).__name__}"
        )
    checked = list(changes)
    for change in checked:
        if not isinstance(change, StateChange):
            raise InvalidActum(f"state must hold StateChange values, not {type(change).__name__}")
        check_identifier("namespace", change.namespace)
        if change.namespace == "":
            raise InvalidActum("a state change names no namespace")
        if not isinstance(change.scope, StateScope):
            raise InvalidActum(f"unknown state scope {change.scope!r}")
        if not isinstance(change.path, tuple) or not all(isinstance(k, str) for k in change.path):
            raise InvalidActum("a state change's path must be a tuple of strings")
        if not isinstance(change.replace, bool):
            raise InvalidActum("a state change's replace must be True or False")
        for name, value in (("set", change.set), ("expect", change.expect)):
            if value is None and name == "expect":
                continue
            if not isinstance(value, Mapping):
                raise InvalidActum(f"a state change's {name} must be a mapping")
            try:
                check_json({"path": list(change.path), name: dict(value)})
            except InvalidActum as exc:
                raise InvalidActum(f"state: {exc}") from None
            except RecursionError:
                raise InvalidActum("state is nested too deeply") from None
            if max_bytes is not None:
                size = len(dumps_data(dict(value)).encode())
                if size > max_bytes:
                    raise InvalidActum(
                        f"a state change is {size} bytes of JSON, more than the limit of"
                        f" {max_bytes} (CHRONICA['MAX_ACTUM_BYTES'])"
                    )
    if len({c.namespace for c in checked if c.scope is StateScope.CHRONICUM}) > 1:
        raise InvalidActum("a write changes the chronicum's state in one namespace only")
    return checked
