"""``POST <prefix>/chronica/<id>/fork/`` and ``POST <prefix>/chronica/<id>/compactions/``:
a copy of a chronicum up to an actum (``services.fork_chronicum``), and an agent's
compaction of its history (``services.compact``); the compacted window itself is the
window's and the stream's ``?compacted=true``."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from .. import services
from . import schema
from .agents import chronicarius_for
from .bodies import check_body, json_type
from .errors import BadRequest
from .inputs import acta_from_body, idempotency_key, owner_id, read_body
from .serializers import ActumSerializer, ChronicumSerializer, _Text
from .wire import acta_wire

__all__ = ["CompactionMixin"]


def _an_id(name: str, value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValidationError(f"{name} must be a string, not {json_type(value)}")
    return value


class ForkSerializer(serializers.Serializer[Any]):
    """What to fork: up to which actum, into which new chronicum."""

    through = _Text(
        required=False,
        allow_null=True,
        default=None,
        help_text="An actum ID of this chronicum: the fork holds the acta up to and with it;"
        " absent or null: all of them.",
    )
    id = _Text(
        required=False,
        allow_null=True,
        default=None,
        help_text="The new chronicum's ID (no '/'); absent or null: a new unguessable one.",
    )

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        check_body(data, self.fields, '{} or {"through": ..., "id": ...}')
        return super().to_internal_value(data)  # type: ignore[no-any-return]

    def validate_through(self, through: Any) -> str | None:
        return _an_id("through", through)

    def validate_id(self, chronicum_id: Any) -> str | None:
        chronicum_id = _an_id("id", chronicum_id)
        if chronicum_id is not None and "/" in chronicum_id:
            raise ValidationError("id must not contain '/': it could not be named in a URL")
        return chronicum_id


class CompactionSerializer(serializers.Serializer[Any]):
    """A compaction: the acta that stand for every actum up to `through`."""

    through = _Text(
        help_text="An actum ID of this chronicum: the compaction stands for it and every"
        " actum before it.",
    )
    acta = serializers.JSONField(
        help_text="The compaction's acta (one or more, each as for POST .../acta/), usually"
        " the summary an agent wrote.",
    )

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        check_body(data, self.fields, '{"through": ..., "acta": [...]}')
        return super().to_internal_value(data)  # type: ignore[no-any-return]

    def validate_acta(self, acta: Any) -> list[Any]:
        if not isinstance(acta, list) or not acta:
            raise ValidationError("acta must be a non-empty JSON array of acta")
        return acta


FORK: dict[str, Any] = {
    "operation_id": "chronica_fork",
    "summary": "Fork a chronicum: a new one holding copies of its acta up to one of them",
    "description": "Creates a new chronicum of the caller's (`id`, or a new unguessable one)"
    " holding copies of this chronicum's acta up to and including the actum `through` (all"
    " of them when absent): the same order, kinds, actors, content, data, call IDs, times and"
    " `recorded_by`, new actum IDs, no idempotency keys. This chronicum stays as it was. A"
    " `through` that is not an actum of it is a 400; an `id` that is taken, by anyone, a 409.",
    "parameters": [
        schema.CHRONICUM_ID,
        OpenApiParameter(
            "Location",
            str,
            OpenApiParameter.HEADER,
            description="The new chronicum's URL.",
            response=[201],
        ),
        schema.RETRY_AFTER,
    ],
    "request": ForkSerializer,
    "examples": [
        OpenApiExample(
            "From an actum, into a chosen ID",
            value={"through": "5d2c...", "id": "dinner-friday-kayu-manis"},
            request_only=True,
        )
    ],
    "responses": {
        201: ChronicumSerializer,
        400: schema._INVALID,
        **schema._COMMON,
        409: OpenApiResponse(schema._ERROR, description="That ID is taken."),
        411: schema._LENGTH_REQUIRED,
        413: schema._TOO_LARGE,
        501: schema._STORE_CANNOT,
    },
}

POST_COMPACTION: dict[str, Any] = {
    "operation_id": "chronica_compactions_create",
    "summary": "Record a compaction: acta that stand for every actum up to one of them",
    "description": "Records `acta` (as POST .../acta/ would, all or none, with no other actum"
    " between them) as the compaction of every actum up to and including `through`, each"
    " carrying `compacts`: `through`. Nothing is removed or changed: the window shows every"
    " actum as before, and `?compacted=true` shows the newest compaction's acta followed by"
    " the acta recorded after its `through` that belong to no compaction. A `through` that is"
    " not an actum of this chronicum is a 400, with nothing written. With an"
    " `Idempotency-Key` already used in this chronicum, nothing is written and what was"
    " stored the first time comes back (200).",
    "parameters": [
        schema.CHRONICUM_ID,
        OpenApiParameter(
            "Idempotency-Key",
            {"type": "string", "maxLength": 255, "pattern": r"^[\x20-\x2B\x2D-\x7E]*$"},
            OpenApiParameter.HEADER,
            description="A retry with a key already used in this chronicum returns what was"
            " stored the first time (200) and writes nothing.",
        ),
        OpenApiParameter(
            "Idempotent-Replayed",
            {"type": "string", "enum": ["true"]},
            OpenApiParameter.HEADER,
            description="Set on a replay.",
            response=[200],
        ),
        schema.RETRY_AFTER,
    ],
    "request": CompactionSerializer,
    "responses": {
        201: OpenApiResponse(ActumSerializer(many=True), description="Recorded."),
        200: OpenApiResponse(
            ActumSerializer(many=True),
            description="A replay (header Idempotent-Replayed): what the first request with"
            " this key stored.",
        ),
        400: schema._INVALID,
        **schema._COMMON,
        411: schema._LENGTH_REQUIRED,
        413: schema._TOO_LARGE,
        501: schema._STORE_CANNOT,
    },
}


class CompactionMixin:
    """The fork and compaction actions for ``ChronicumViewSet`` (``chronicum-fork``,
    ``chronicum-compactions``)."""

    @extend_schema(**FORK)
    @action(detail=True, methods=["post"], url_path="fork", url_name="fork")
    def fork(self, request: Request, chronicum_id: str) -> Response:
        """A new chronicum holding copies of this one's acta, up to `through`."""
        body = read_body(ForkSerializer(data=request.data))
        owner = owner_id(request)
        forked = chronicarius_for(request, owner).fork_chronicum(
            owner, chronicum_id, through=body["through"], new_id=body["id"]
        )
        location = self.reverse_action("detail", args=[forked.id])  # type: ignore[attr-defined]
        return Response(
            ChronicumSerializer(forked).data,
            status=status.HTTP_201_CREATED,
            headers={"Location": location},
        )

    @extend_schema(**POST_COMPACTION)
    @action(detail=True, methods=["post"], url_path="compactions", url_name="compactions")
    def compactions(self, request: Request, chronicum_id: str) -> Response:
        """Record a compaction of every actum up to `through`."""
        body = read_body(CompactionSerializer(data=request.data))
        agent = isinstance(request.auth, services.AgentIdentity)
        acta = acta_from_body(chronicum_id, body["acta"], agent=agent)
        if not acta:
            raise BadRequest("acta must be a non-empty JSON array of acta")
        owner, key = owner_id(request), idempotency_key(request)
        recorded = chronicarius_for(request, owner).compact(
            owner, chronicum_id, acta, through=body["through"], idempotency_key=key
        )
        if recorded.replayed:
            return Response(
                acta_wire(recorded),
                status=status.HTTP_200_OK,
                headers={"Idempotent-Replayed": "true"},
            )
        return Response(acta_wire(recorded), status=status.HTTP_201_CREATED)
