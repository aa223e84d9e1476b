"""How chronica's values look on the wire.

The output serializers render the frozen value types. ``ActumWriteSerializer``
describes the body of a write for the OpenAPI schema only: the values in it are
judged by ``chronica.services``, so that the API refuses exactly what the
library refuses, with the library's own message.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers

from ..validation import MAX_LENGTH
from ..values import ActorKind, ActumKind

__all__ = [
    "ActumSerializer",
    "ActumWriteSerializer",
    "ChronicumPageSerializer",
    "ChronicumSerializer",
    "ErrorSerializer",
    "NewChronicumSerializer",
]

_KINDS = [kind.value for kind in ActumKind]
_ACTOR_KINDS = [kind.value for kind in ActorKind]


# Named after the Python types: the "KindEnum" drf-spectacular would name after
# the field could collide with the host project's own fields named "kind".
@extend_schema_field({"type": "string", "enum": _KINDS}, component_name="ActumKind")
class KindField(serializers.ChoiceField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(choices=_KINDS, **kwargs)


@extend_schema_field({"type": "string", "enum": _ACTOR_KINDS}, component_name="ActorKind")
class ActorKindField(serializers.ChoiceField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(choices=_ACTOR_KINDS, **kwargs)


class ChronicumSerializer(serializers.Serializer[Any]):
    """A chronicum (session): its ID, its owner, when it started and when its last actum
    was written."""

    id = serializers.CharField(read_only=True)
    owner_id = serializers.CharField(read_only=True)
    started_at = serializers.DateTimeField(read_only=True)
    last_activity_at = serializers.DateTimeField(read_only=True)


# A page, not a list: drf-spectacular would take a list action's answer for an array.
@extend_schema_serializer(many=False, component_name="ChronicumPage")
class ChronicumPageSerializer(serializers.Serializer[Any]):
    """A page of the caller's chronica, latest activity first."""

    results = ChronicumSerializer(many=True, read_only=True)
    next = serializers.URLField(
        read_only=True,
        allow_null=True,
        help_text="The URL of the next page; null on the last one.",
    )


@extend_schema_serializer(component_name="NewChronicum")
class NewChronicumSerializer(serializers.Serializer[Any]):
    """The body that starts a chronicum: `{}` for a new unguessable ID, or the ID wanted."""

    id = serializers.CharField(
        required=False,
        allow_null=True,
        max_length=MAX_LENGTH,
        help_text="The chronicum ID wanted (no '/'); absent or null: a new unguessable one.",
    )


class ActumSerializer(serializers.Serializer[Any]):
    """An actum as stored: what happened, who did it, and when."""

    id = serializers.CharField(read_only=True)
    chronicum_id = serializers.CharField(read_only=True)
    kind = KindField(read_only=True)
    actor_kind = ActorKindField(read_only=True)
    actor = serializers.CharField(read_only=True)
    content = serializers.CharField(read_only=True)
    at = serializers.DateTimeField(read_only=True)
    call_id = serializers.CharField(
        read_only=True,
        help_text="Ties a tool request to its tool response(s); empty on other kinds.",
    )
    # The metaclass takes declared fields off the class, so Serializer.data stays
    # the property; only the type checker sees a clash.
    data = serializers.JSONField(  # type: ignore[assignment]
        read_only=True,
        allow_null=True,
        help_text="The structured form of the actum, any JSON value, given back as recorded;"
        " null when none was given.",
    )
    recorded_by = serializers.CharField(
        read_only=True,
        allow_null=True,
        help_text="Who wrote it, set by chronica: `owner` for the owner signed in as themselves,"
        " `credential:<key ID>` for an agent's credential; null when the actor was not"
        " attested (a trusted server-side call, or a writer that knows only the seed's"
        " columns).",
    )


class ActumWriteSerializer(serializers.Serializer[Any]):
    """One actum to record. chronica gives its ID and time."""

    kind = KindField()
    actor_kind = ActorKindField()
    actor = serializers.CharField(max_length=MAX_LENGTH)
    content = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text="Required for a message or a thought; may be empty for a tool request or"
        " response.",
    )
    call_id = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=MAX_LENGTH,
        help_text="Only on a tool request or a tool response: the same string on a request and"
        " on its response(s).",
    )
    data = serializers.JSONField(  # type: ignore[assignment]
        required=False,
        allow_null=True,
        help_text="Any JSON value: the structured form of the actum (an agent framework's"
        " item), given back equal. Absent or null: none.",
    )


@extend_schema_serializer(component_name="ChronicaError")
class ErrorSerializer(serializers.Serializer[Any]):
    """Every error answer: what is wrong, in `detail`."""

    detail = serializers.CharField(read_only=True)
