"""How chronica's values look on the wire, and how the bodies of writes are read.

The output serializers render the frozen value types (``chronica.api.wire`` writes
the acta of the answers as ``ActumSerializer`` does, directly). The input serializers
(``ActumWriteSerializer``, ``NewChronicumSerializer``) are what the OpenAPI schema
documents and what reads the body: its JSON shape, the fields it takes, those it
needs. The values in the fields are judged by ``chronica.services``, as they were
sent, so that the API refuses exactly what the library refuses, with the library's
own message (``{"detail": ...}``, :func:`error_message`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from enum import Enum
from typing import Any

from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers
from rest_framework.exceptions import ErrorDetail
from rest_framework.fields import empty
from rest_framework.serializers import ValidationError

from ..conf import chronica_settings
from ..validation.identifiers import MAX_LENGTH
from ..values import ActorKind, Actum, ActumKind, StateChange, StateScope
from .bodies import check_body, error_message, json_type, refused

__all__ = [
    "ActumSerializer",
    "ActumWriteSerializer",
    "ChronicumPageSerializer",
    "ChronicumSerializer",
    "ErrorSerializer",
    "NewChronicumSerializer",
    "StateSerializer",
    "StateWriteSerializer",
    "error_message",
    "json_type",
]

_KINDS = [kind.value for kind in ActumKind]
_ACTOR_KINDS = [kind.value for kind in ActorKind]


class _AsSent(serializers.Field[Any, Any, Any, Any]):
    """A field whose value is taken as it was sent (missing is still missing): the
    services judge it. The field class it is mixed into says what the schema shows."""

    def run_validation(self, data: Any = empty) -> Any:
        if data is empty:
            return super().run_validation(data)
        return data


class _EnumField(_AsSent):
    """A member of a ``StrEnum`` on the wire: its value. The schema names the values
    (``extend_schema_field``); a value sent is judged by the services."""

    def to_representation(self, value: Any) -> Any:
        return value.value if isinstance(value, Enum) else value


# Named after the Python types: the "KindEnum" drf-spectacular would name after
# the field could collide with the host project's own fields named "kind".
@extend_schema_field({"type": "string", "enum": _KINDS}, component_name="ActumKind")
class KindField(_EnumField):
    pass


@extend_schema_field({"type": "string", "enum": _ACTOR_KINDS}, component_name="ActorKind")
class ActorKindField(_EnumField):
    pass


class _Text(_AsSent, serializers.CharField):
    pass


class _JSON(_AsSent, serializers.JSONField):
    pass


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


# Reads {} or {"id": ...} into {"id": <the ID, or None for a new one>}. Any other key
# is refused rather than ignored: a misspelt "ID" would otherwise mint an ID the caller
# did not want. An ID with a "/" could not be named in this API's URLs, so it is
# refused too; the rest of the ID is the services' to judge.
@extend_schema_serializer(component_name="NewChronicum")
class NewChronicumSerializer(serializers.Serializer[Any]):
    """The body that starts a chronicum: `{}` for a new unguessable ID, or the ID wanted."""

    id = _Text(
        required=False,
        default=None,
        allow_null=True,
        max_length=MAX_LENGTH,
        help_text="The chronicum ID wanted (no '/'); absent or null: a new unguessable one.",
    )

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        check_body(data, self.fields, '{} or {"id": ...}')
        return super().to_internal_value(data)  # type: ignore[no-any-return]

    def validate_id(self, chronicum_id: Any) -> str | None:
        if chronicum_id is not None and not isinstance(chronicum_id, str):
            raise ValidationError(f"id must be a string, not {json_type(chronicum_id)}")
        if chronicum_id is not None and "/" in chronicum_id:
            raise ValidationError("id must not contain '/': it could not be named in a URL")
        return chronicum_id


class RedactionSerializer(serializers.Serializer[Any]):
    """When and why an actum's content and data were removed."""

    at = serializers.DateTimeField(read_only=True)
    reason = serializers.CharField(read_only=True, allow_blank=True)


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
    redacted = RedactionSerializer(
        read_only=True,
        allow_null=True,
        help_text="null, or when and why its content and data were removed (then `content`"
        ' is "" and `data` null).',
    )
    compacts = serializers.CharField(
        read_only=True,
        help_text="On each actum of a compaction, the ID of the actum it compacts through"
        " (POST .../compactions/); empty on every other actum.",
    )


class _FirstRefused(serializers.ListSerializer):  # type: ignore[type-arg]
    """A JSON array of items, read up to the first that is refused, which the error
    names (``actum 3: ...``)."""

    #: What an item is called in an error.
    item = "item"

    def most(self) -> int | None:
        return None

    def to_internal_value(self, data: Any) -> list[Any]:
        if not isinstance(data, list):
            raise refused(
                f"{self.field_name or 'the body'} must be a JSON array, not {json_type(data)}"
            )
        most = self.most()
        if most is not None and len(data) > most:
            raise refused(
                f"a batch holds at most {most} acta (CHRONICA['API_MAX_ACTA']), not {len(data)}"
            )
        items = []
        for position, value in enumerate(data):
            try:
                items.append(self.child.run_validation(value))  # type: ignore[union-attr]
            except ValidationError as exc:
                raise refused(f"{self.item} {position}: {error_message(exc.detail)}") from None
        return items


class _Batch(_FirstRefused):
    """A batch: at most ``CHRONICA["API_MAX_ACTA"]`` acta (the most one answer holds)."""

    item = "actum"

    def most(self) -> int | None:
        return chronica_settings.API_MAX_ACTA


class _Changes(_FirstRefused):
    item = "change"


# Reads a body into an Actum of the chronicum context["chronicum_id"] (many=True: a
# batch, a list of them). Fields it does not know are ignored, as the ID and the time
# are chronica's to give. With context["agent"] (an agent's credential) actor and
# actor_kind may be left out: the services fill them in from the credential.
class ActumWriteSerializer(serializers.Serializer[Any]):
    """One actum to record. chronica gives its ID and time."""

    class Meta:
        list_serializer_class = _Batch

    def get_fields(self) -> dict[str, serializers.Field]:  # type: ignore[type-arg]
        # Made anew (DRF deep-copies declared fields: a tenth of a write request's time).
        fields: dict[str, serializers.Field] = {  # type: ignore[type-arg]
            "kind": KindField(),
            "actor_kind": ActorKindField(
                help_text="Required, but for an agent's credential, whose actor kind it is by"
                " default."
            ),
            "actor": _Text(
                max_length=MAX_LENGTH,
                help_text="Required, but for an agent's credential, whose actor it is.",
            ),
            "content": _Text(
                required=False,
                default="",
                allow_blank=True,
                help_text="Required for a message or a thought; may be empty for a tool request"
                " or response.",
            ),
            "call_id": _Text(
                required=False,
                default="",
                allow_blank=True,
                max_length=MAX_LENGTH,
                help_text="Only on a tool request or a tool response: the same string on a"
                " request and on its response(s).",
            ),
            "data": _JSON(
                required=False,
                default=None,
                allow_null=True,
                help_text="Any JSON value: the structured form of the actum (an agent"
                " framework's item), given back equal. Absent or null: none.",
            ),
        }
        if self.context.get("agent"):
            fields["actor"].required = False
            fields["actor_kind"].required = False
        return fields

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        """What DRF's loop over the fields gives (each value as sent, the default of
        one left out, a "required" error for each required one missing), read from the
        fields' own ``required`` and ``default`` (:func:`_reading`): without making and
        binding six fields a request, which took most of a write's validation."""
        if not isinstance(data, Mapping):
            raise refused(f"an actum must be a JSON object, not {json_type(data)}")
        reading = _reading(type(self), bool(self.context.get("agent")))
        if reading is None:  # a subclass with fields that judge their values
            return super().to_internal_value(data)  # type: ignore[no-any-return]
        attrs: dict[str, Any] = {}
        missing: dict[str, list[ErrorDetail]] = {}
        for name, default, required in reading:
            value = data.get(name, empty)
            if value is not empty:
                attrs[name] = value
            elif required is not None:
                # (translated now: the message is lazy, as DRF's field keeps it)
                missing[name] = [ErrorDetail(str(required), code="required")]
            elif default is not empty:
                attrs[name] = default
        if missing:
            raise ValidationError(missing)
        return attrs

    def run_validators(self, value: Any) -> None:
        # DRF's makes the fields to look for read-only ones with a default; there are
        # none here, nor validators but where a subclass adds them.
        if self.validators:
            super().run_validators(value)

    def validate(self, attrs: dict[str, Any]) -> Actum:
        return Actum(
            chronicum_id=self.context["chronicum_id"],
            kind=attrs["kind"],
            actor_kind=attrs.get("actor_kind", ""),
            actor=attrs.get("actor", ""),
            content=attrs["content"],
            call_id=attrs["call_id"],
            data=attrs["data"],
        )


@functools.cache
def _reading(
    serializer: type[ActumWriteSerializer], agent: bool
) -> tuple[tuple[str, Any, Any], ...] | None:
    """How ``serializer`` (``ActumWriteSerializer`` or a subclass) reads a body, for an
    agent's credential or not: each field's name, its default (``empty``: none), and its
    "required" message (lazy) where it is required; taken from the fields ``get_fields``
    makes, once. ``None`` where a field judges its value (not ``_AsSent``): then DRF's
    loop over the fields reads it."""
    fields = serializer(context={"agent": agent}).get_fields()
    if not all(isinstance(field, _AsSent) for field in fields.values()):
        return None
    return tuple(
        (name, field.default, field.error_messages["required"] if field.required else None)
        for name, field in fields.items()
    )


# Over HTTP a request writes its chronicum's state and its owner's. The namespace's
# state is shared by every owner who writes into the namespace: the app's own code
# writes it, never a request one owner's credentials made.
_HTTP_SCOPES = [StateScope.CHRONICUM.value, StateScope.OWNER.value]


@extend_schema_field({"type": "string", "enum": _HTTP_SCOPES, "default": "chronicum"})
class _ScopeField(_AsSent):
    pass


@extend_schema_field({"type": "array", "items": {"type": "string"}, "default": []})
class _PathField(_AsSent):
    pass


@extend_schema_field({"type": "boolean", "default": False})
class _FlagField(_AsSent):
    pass


# Reads one change into a StateChange; the values are the services' to judge.
@extend_schema_serializer(component_name="StateChange")
class StateChangeSerializer(serializers.Serializer[Any]):
    """One change to one state document: `set` sets keys in the object at `path` (the
    whole object with `replace`), if `expect` holds at the top of the document."""

    namespace = _Text(
        max_length=MAX_LENGTH,
        help_text="Whose state: an app's or an agent framework's name. A chronicum keeps its"
        " state in one namespace.",
    )
    scope = _ScopeField(
        required=False,
        default=StateScope.CHRONICUM.value,
        help_text="`chronicum`: this chronicum's own state; `owner`: the caller's state in"
        " the namespace, shared by their chronica there.",
    )
    set = _JSON(
        required=False,
        default=dict,
        help_text="A JSON object: its keys set, as `dict.update` does.",
    )
    path = _PathField(
        required=False,
        default=list,
        help_text="Keys into nested objects (created where missing); `[]` is the document.",
    )
    replace = _FlagField(
        required=False,
        default=False,
        help_text="True: the object at `path` becomes `set` exactly.",
    )
    expect = _JSON(
        required=False,
        default=None,
        allow_null=True,
        help_text="A JSON object: each key must have that value at the top of the document"
        " before the change (a missing key counts as null), else nothing is changed (409).",
    )

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, Mapping):
            raise refused(f"a state change must be a JSON object, not {json_type(data)}")
        return super().to_internal_value(data)  # type: ignore[no-any-return]

    class Meta:
        list_serializer_class = _Changes

    def validate_scope(self, scope: Any) -> Any:
        if scope == StateScope.NAMESPACE.value:
            raise ValidationError(
                "scope 'namespace' is not written over HTTP: the namespace's state is"
                " shared by every owner, and the app's own code writes it"
            )
        return scope

    def validate(self, attrs: dict[str, Any]) -> StateChange:
        path = attrs["path"]
        return StateChange(
            namespace=attrs["namespace"],
            scope=attrs["scope"],
            set=attrs["set"],
            path=tuple(path) if isinstance(path, list) else path,
            replace=attrs["replace"],
            expect=attrs["expect"],
        )


# Reads {"changes": [...], "create": false} into the arguments of update_state.
@extend_schema_serializer(component_name="StateWrite")
class StateWriteSerializer(serializers.Serializer[Any]):
    """State changes made in one transaction: all of them, or none."""

    changes = StateChangeSerializer(many=True)
    # Declared fields leave the class (Serializer.create stays the method); only the type
    # checker sees a clash.
    create = _FlagField(  # type: ignore[assignment]
        required=False,
        default=False,
        help_text="True: the chronicum is created by this write (409 if the ID is taken, by"
        " anyone); false: a missing one is a 404.",
    )

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        check_body(data, self.fields, '{"changes": [...]}')
        return super().to_internal_value(data)  # type: ignore[no-any-return]

    def validate_create(self, create: Any) -> bool:
        if not isinstance(create, bool):
            raise ValidationError(f"create must be true or false, not {json_type(create)}")
        return create


@extend_schema_serializer(component_name="State")
class StateSerializer(serializers.Serializer[Any]):
    """The state a chronicum keeps in a namespace, and its owner's there."""

    namespace = serializers.CharField(read_only=True)
    chronicum_state = serializers.JSONField(
        read_only=True,
        allow_null=True,
        help_text="The chronicum's own state in the namespace; null when it has none.",
    )
    owner_state = serializers.JSONField(
        read_only=True,
        help_text="The caller's state in the namespace; `{}` when none was stored.",
    )


@extend_schema_serializer(component_name="ChronicaError")
class ErrorSerializer(serializers.Serializer[Any]):
    """Every error answer: what is wrong, in `detail`."""

    detail = serializers.CharField(read_only=True)
