"""What a request body may be, and how a refusal of one reads: one sentence, the same for
every route (the serializers and the views use these)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.settings import api_settings

__all__ = ["check_body", "error_message", "json_type", "refused"]


def check_body(data: Any, fields: Mapping[str, Any], example: str) -> None:
    """A request body: a JSON object (``example`` shows one) of ``fields`` only."""
    if not isinstance(data, Mapping):
        raise refused(f"the body must be a JSON object, {example}, not {json_type(data)}")
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise refused(
            f"unknown field(s): {', '.join(unknown)} (the body takes: {', '.join(fields)})"
        )


def refused(message: str) -> ValidationError:
    """A refusal in the shape DRF's serializers give a whole value's error."""
    return ValidationError({api_settings.NON_FIELD_ERRORS_KEY: [message]})


def error_message(detail: Any) -> str:
    """One sentence for DRF's ``ValidationError`` detail of an input serializer: the
    fields missing, or the first thing refused."""
    if isinstance(detail, Mapping):
        missing = [
            name
            for name, errors in detail.items()
            if isinstance(errors, list)
            and any(getattr(error, "code", None) == "required" for error in errors)
        ]
        if missing:
            return f"missing field(s): {', '.join(map(str, missing))}"
        return error_message(next(iter(detail.values()), ""))
    if isinstance(detail, list):
        return error_message(detail[0]) if detail else ""
    return str(detail)


def json_type(value: Any) -> str:
    """What a parsed JSON value was on the wire."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"
