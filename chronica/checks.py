"""System checks for ``settings.CHRONICA`` (``manage.py check``)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.core.exceptions import ImproperlyConfigured

from .conf import DEFAULTS, _resolve, chronica_settings


@register(Tags.compatibility)
def check_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    if not settings.USE_TZ:
        errors.append(
            Warning(
                "chronica keeps aware UTC datetimes and expects USE_TZ = True.",
                hint="Set USE_TZ = True (Django's default since 5.0).",
                id="chronica.W001",
            )
        )
    value = getattr(settings, "CHRONICA", None)
    if value is None:
        return errors
    if not isinstance(value, Mapping):
        return [*errors, Error("The CHRONICA setting must be a dict.", id="chronica.E001")]
    unknown = sorted(set(value) - set(DEFAULTS))
    if unknown:
        errors.append(
            Error(
                f"CHRONICA has unknown keys: {', '.join(map(str, unknown))}.",
                hint=f"Known keys: {', '.join(DEFAULTS)}.",
                id="chronica.E002",
            )
        )
    store: Callable[..., Any] | None = None
    for name, check_id in (
        ("STORE", "chronica.E003"),
        ("OWNER_ID", "chronica.E005"),
        ("TOKEN_COUNTER", "chronica.E007"),
    ):
        try:
            resolved = _resolve(name, value.get(name, DEFAULTS[name]))
        except ImproperlyConfigured as exc:
            errors.append(Error(str(exc), id=check_id))
        else:
            if name == "STORE":
                store = resolved
    options = value.get("STORE_OPTIONS", {})
    if not isinstance(options, Mapping):
        errors.append(Error("CHRONICA['STORE_OPTIONS'] must be a dict.", id="chronica.E004"))
    elif store is not None:
        errors.extend(_check_store_options(store, options))
    for name, check_id in (
        ("MAX_ACTUM_BYTES", "chronica.E010"),
        ("API_MAX_ACTA", "chronica.E011"),
        ("FOLLOW_POLL_INTERVAL", "chronica.E008"),
        ("ASYNC_POOL_SIZE", "chronica.E009"),
        ("AUTO_CREATE", "chronica.E015"),
        ("AGENT_THROTTLE_RATE", "chronica.E017"),
    ):
        try:
            getattr(chronica_settings, name)
        except ImproperlyConfigured as exc:
            errors.append(Error(str(exc), id=check_id))
    return errors


def _check_store_options(store: Callable[..., Any], options: Mapping[Any, Any]) -> list[Error]:
    """E006: the store's signature refuses the options; found here, not at the first request."""
    try:
        signature = inspect.signature(store)
    except (TypeError, ValueError):
        return []  # no signature to read (a builtin): building the store will tell
    try:
        signature.bind(**options)
    except TypeError as exc:
        name = getattr(store, "__qualname__", repr(store))
        return [
            Error(
                f"CHRONICA['STORE_OPTIONS'] {dict(options)!r} do not fit CHRONICA['STORE']"
                f" {name}: {exc}.",
                hint=f"{name} takes {signature}.",
                id="chronica.E006",
            )
        ]
    return []
