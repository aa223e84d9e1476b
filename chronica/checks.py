"""System checks for ``settings.CHRONICA`` (``manage.py check``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.core.exceptions import ImproperlyConfigured

from .conf import DEFAULTS, _resolve


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
    for name, check_id in (("STORE", "chronica.E003"), ("OWNER_ID", "chronica.E005")):
        try:
            _resolve(name, value.get(name, DEFAULTS[name]))
        except ImproperlyConfigured as exc:
            errors.append(Error(str(exc), id=check_id))
    if not isinstance(value.get("STORE_OPTIONS", {}), Mapping):
        errors.append(Error("CHRONICA['STORE_OPTIONS'] must be a dict.", id="chronica.E004"))
    return errors
