"""The rules of chronica, in one place.

``Chronicarius`` enforces every rule of the contract on top of a plain store.
The module functions (``record_actum``, ``get_acta`` and the rest, with their
``a*`` twins) call a Chronicarius built once from ``settings.CHRONICA`` and
rebuilt when that setting changes. Only the module functions need Django
settings; ``Chronicarius`` itself works in any Python process.
"""

from __future__ import annotations

import functools
import inspect
import threading
import warnings
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar

from django.core.signals import setting_changed

# The errors its calls raise, importable from here too (as from chronica).
from ..errors import (
    ChronicaError,
    ChronicumExists,
    ChronicumNotFound,
    EmptyOwnerID,
    IdempotencyUnsupported,
    InvalidActum,
    InvalidQuery,
    NotPermitted,
    StateConflict,
    StoreUnsupported,
)
from ..telemetry import instrument
from ..values import Actum, Recorded, StateChange
from .base import TokenCounter, new_id
from .compaction import Compaction
from .credentials import (
    CredentialInfo,
    InvalidCredential,
    IssuedCredential,
    authenticate_credential,
    credential_active,
    issue_credential,
    list_credentials,
    revoke_credential,
)
from .following import Follower, Following
from .identity import AgentIdentity, Identity, OwnerIdentity
from .lifecycle import Lifecycle
from .reading import Reading
from .state import State
from .writing import Writing

__all__ = [
    "AgentIdentity",
    "ChronicaError",
    "Chronicarius",
    "ChronicumExists",
    "ChronicumNotFound",
    "CredentialInfo",
    "EmptyOwnerID",
    "Follower",
    "IdempotencyUnsupported",
    "Identity",
    "InvalidActum",
    "InvalidCredential",
    "InvalidQuery",
    "IssuedCredential",
    "NotPermitted",
    "OwnerIdentity",
    "StateConflict",
    "StoreUnsupported",
    "TokenCounter",
    "acompact",
    "acreate_chronicum",
    "acting_as",
    "adelete_chronicum",
    "afollow",
    "afork_chronicum",
    "aget_acta",
    "aget_acta_page",
    "aget_chronicum",
    "aget_state",
    "alist_chronica",
    "alist_chronica_page",
    "alist_namespace",
    "apop_actum",
    "arecord",
    "arecord_acta",
    "arecord_actum",
    "aupdate_state",
    "authenticate_credential",
    "compact",
    "create_chronicum",
    "credential_active",
    "delete_chronicum",
    "fork_chronicum",
    "get_acta",
    "get_acta_page",
    "get_chronicarius",
    "get_chronicum",
    "get_state",
    "issue_credential",
    "list_chronica",
    "list_chronica_page",
    "list_credentials",
    "list_namespace",
    "new_id",
    "owner_id_for",
    "pop_actum",
    "record",
    "record_acta",
    "record_actum",
    "revoke_credential",
    "update_state",
]


_P = ParamSpec("_P")
_R = TypeVar("_R")


class Chronicarius(Writing, Reading, Lifecycle, State, Following, Compaction):
    """The one object that enforces the rules; apps talk only to it.

    Every call names an owner. A chronicum that belongs to someone else answers
    ``ChronicumNotFound``, exactly like one that does not exist. Errors that are
    not chronica's own (a lost database connection) come back as they were raised.

    ``token_counter(actum) -> int`` counts an actum's tokens when it is recorded
    (default: :func:`chronica.tokens.estimate_tokens`); ``max_actum_bytes`` limits
    ``content`` plus the JSON of ``data`` (``None``: no limit); ``poll_interval`` is
    how many seconds a follower waits before it reads again when nothing woke it;
    ``auto_create=False`` makes a write into a missing chronicum ``ChronicumNotFound``
    (only ``create_chronicum`` creates).
    """


Chronicarius.signal_sender = Chronicarius
# One span per public call, here and only here (chronica.telemetry; chronica[otel]).
instrument(Chronicarius)

# -- the configured Chronicarius ------------------------------------------

_lock = threading.Lock()
_configured: Chronicarius | None = None


def get_chronicarius() -> Chronicarius:
    """The Chronicarius built from ``settings.CHRONICA``, built once and cached."""
    global _configured
    chronicarius = _configured
    if chronicarius is None:
        with _lock:
            if _configured is None:
                from ..conf import chronica_settings

                _configured = Chronicarius(
                    chronica_settings.build_store(),
                    token_counter=chronica_settings.token_counter(),
                    max_actum_bytes=chronica_settings.MAX_ACTUM_BYTES,
                    poll_interval=chronica_settings.FOLLOW_POLL_INTERVAL,
                    auto_create=chronica_settings.AUTO_CREATE,
                )
            chronicarius = _configured
    return chronicarius


def acting_as(identity: Identity | None) -> Chronicarius:
    """The configured Chronicarius, for calls made by ``identity`` (see
    :meth:`Chronicarius.acting_as`): what the API, tasks and agents call with an
    agent's credential, so that its rules hold however the call arrives."""
    return get_chronicarius().acting_as(identity)


def reset_chronicarius() -> None:
    """Forget the cached Chronicarius; the next call builds it from settings again."""
    global _configured
    with _lock:
        _configured = None


def _on_setting_changed(*, setting: str, **kwargs: Any) -> None:
    if setting == "CHRONICA":
        reset_chronicarius()


setting_changed.connect(_on_setting_changed, dispatch_uid="chronica.services.setting_changed")


def owner_id_for(user: Any) -> str:
    """The owner ID of a Django user: ``CHRONICA["OWNER_ID"](user)`` (default
    ``str(user.pk)``). The API, views, tasks and agents all map users to owners
    through this one function. An anonymous user has none: ``EmptyOwnerID``."""
    from ..conf import chronica_settings
    from ..errors import EmptyOwnerID

    if user is None or not getattr(user, "is_authenticated", True):
        raise EmptyOwnerID("an anonymous user has no owner ID")
    owner_id = chronica_settings.owner_id_function()(user)
    if not isinstance(owner_id, str):
        raise TypeError(f"CHRONICA['OWNER_ID'] returned {type(owner_id).__name__}, not a str")
    return owner_id


def _on_configured(
    method: Callable[Concatenate[Chronicarius, _P], _R],
) -> Callable[_P, _R]:
    """A module function: ``method`` of the configured Chronicarius."""
    name = method.__name__

    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        return getattr(get_chronicarius(), name)(*args, **kwargs)  # type: ignore[no-any-return]

    _like_method(call, method)
    return call


def _on_configured_async(
    method: Callable[Concatenate[Chronicarius, _P], Awaitable[_R]],
) -> Callable[_P, Awaitable[_R]]:
    """An async module function: ``method`` of the configured Chronicarius."""
    name = method.__name__

    async def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        return await getattr(get_chronicarius(), name)(*args, **kwargs)  # type: ignore[no-any-return]

    _like_method(call, method)
    return call


def _like_method(call: Callable[..., Any], method: Callable[..., Any]) -> None:
    """Give the module function ``call`` what ``help()``, ``inspect`` and the API reference
    read off ``method``: its name, its full docstring and its signature without ``self``.

    Not ``functools.wraps`` alone: its ``__wrapped__`` is the unbound method, so
    ``inspect.signature`` would show ``self``, and its ``__module__`` and ``__qualname__``
    would name the mixin the method comes from rather than ``chronica.services``."""
    functools.update_wrapper(call, method)
    del call.__wrapped__  # type: ignore[attr-defined]
    call.__module__ = __name__
    call.__qualname__ = method.__name__
    signature = inspect.signature(method)
    call.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=list(signature.parameters.values())[1:]
    )


def record(
    owner_id: str,
    acta: Sequence[Actum],
    *,
    idempotency_key: str | None = None,
    state: Sequence[StateChange] = (),
) -> Recorded:
    """Deprecated: :func:`record_acta`, whose list tells a replay by ``replayed``."""
    warnings.warn(
        "chronica.services.record() is deprecated: call record_acta(), which takes state="
        " and whose answer has .replayed",
        DeprecationWarning,
        stacklevel=2,
    )
    stored = get_chronicarius().record_acta(
        owner_id, acta, idempotency_key=idempotency_key, state=state
    )
    return Recorded(list(stored), replayed=stored.replayed)


async def arecord(
    owner_id: str,
    acta: Sequence[Actum],
    *,
    idempotency_key: str | None = None,
    state: Sequence[StateChange] = (),
) -> Recorded:
    """Deprecated: :func:`arecord_acta`."""
    warnings.warn(
        "chronica.services.arecord() is deprecated: call arecord_acta(), which takes state="
        " and whose answer has .replayed",
        DeprecationWarning,
        stacklevel=2,
    )
    stored = await get_chronicarius().arecord_acta(
        owner_id, acta, idempotency_key=idempotency_key, state=state
    )
    return Recorded(list(stored), replayed=stored.replayed)


record_actum = _on_configured(Chronicarius.record_actum)
record_acta = _on_configured(Chronicarius.record_acta)
get_acta = _on_configured(Chronicarius.get_acta)
get_acta_page = _on_configured(Chronicarius.get_acta_page)
get_chronicum = _on_configured(Chronicarius.get_chronicum)
create_chronicum = _on_configured(Chronicarius.create_chronicum)
list_chronica = _on_configured(Chronicarius.list_chronica)
list_chronica_page = _on_configured(Chronicarius.list_chronica_page)
delete_chronicum = _on_configured(Chronicarius.delete_chronicum)
pop_actum = _on_configured(Chronicarius.pop_actum)
update_state = _on_configured(Chronicarius.update_state)
get_state = _on_configured(Chronicarius.get_state)
list_namespace = _on_configured(Chronicarius.list_namespace)
arecord_actum = _on_configured_async(Chronicarius.arecord_actum)
arecord_acta = _on_configured_async(Chronicarius.arecord_acta)
aget_acta = _on_configured_async(Chronicarius.aget_acta)
aget_acta_page = _on_configured_async(Chronicarius.aget_acta_page)
aget_chronicum = _on_configured_async(Chronicarius.aget_chronicum)
acreate_chronicum = _on_configured_async(Chronicarius.acreate_chronicum)
alist_chronica = _on_configured_async(Chronicarius.alist_chronica)
alist_chronica_page = _on_configured_async(Chronicarius.alist_chronica_page)
adelete_chronicum = _on_configured_async(Chronicarius.adelete_chronicum)
apop_actum = _on_configured_async(Chronicarius.apop_actum)
aupdate_state = _on_configured_async(Chronicarius.aupdate_state)
aget_state = _on_configured_async(Chronicarius.aget_state)
alist_namespace = _on_configured_async(Chronicarius.alist_namespace)
afollow = _on_configured(Chronicarius.afollow)
compact = _on_configured(Chronicarius.compact)
fork_chronicum = _on_configured(Chronicarius.fork_chronicum)
acompact = _on_configured_async(Chronicarius.acompact)
afork_chronicum = _on_configured_async(Chronicarius.afork_chronicum)
