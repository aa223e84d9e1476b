"""System checks for ``settings.CHRONICA`` (``manage.py check``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, register
from django.core.exceptions import ImproperlyConfigured

from .conf import DEFAULTS, _resolve


@register(Tags.compatibility)
def check_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    value = getattr(settings, "CHRONICA", None)
    if value is None:
        return []
    if not isinstance(value, Mapping):
        return [Error("The CHRONICA setting must be a dict.", id="chronica.E001")]
    errors: list[CheckMessage] = []
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
