"""``POST <prefix>/chronica/<id>/acta/<actum_id>/redact/``: empty one actum's content and
data (``chronica.services.redact_actum``)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from . import schema
from .agents import chronicarius_for
from .inputs import owner_id, read_body
from .serializers import ActumSerializer, _check_body, actum_wire

__all__ = ["REDACT_ACTUM", "RedactMixin", "RedactSerializer"]


@extend_schema_serializer(component_name="RedactRequest")
class RedactSerializer(serializers.Serializer[Any]):
    """Why the actum is redacted (kept with it); optional."""

    reason = serializers.CharField(
        required=False, default="", allow_blank=True, max_length=1000, trim_whitespace=False
    )

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        _check_body(data, self.fields, '{} or {"reason": ...}')
        return super().to_internal_value(data)  # type: ignore[no-any-return]


REDACT_ACTUM: dict[str, Any] = {
    "operation_id": "chronica_acta_redact",
    "summary": "Redact an actum: remove its content and data",
    "description": 'The actum\'s `content` becomes "" and its `data` null, in the table, the'
    " search index and every answer; its ID, place, kind, actor and time stay, and `redacted`"
    " says when and why. Repeating it changes nothing (the first `redacted` stays). The"
    " owner's call: an agent's credential gets 403. An actum ID that is not an actum of the"
    " chronicum: 400.",
    "parameters": [
        schema.CHRONICUM_ID,
        OpenApiParameter(
            "actum_id", str, OpenApiParameter.PATH, description="The actum to redact."
        ),
        schema.RETRY_AFTER,
    ],
    "request": RedactSerializer,
    "responses": {
        200: ActumSerializer,
        400: schema._INVALID,
        **schema._COMMON,
        403: schema._NOT_PERMITTED,
        501: schema._STORE_CANNOT,
    },
}


class RedactMixin:
    """The redact action for ``ChronicumViewSet`` (``chronicum-acta-redact``)."""

    @extend_schema(**REDACT_ACTUM)
    @action(
        detail=True,
        methods=["post"],
        url_path=r"acta/(?P<actum_id>[^/]+)/redact",
        url_name="acta-redact",
    )
    def redact(self, request: Request, chronicum_id: str, actum_id: str) -> Response:
        """Empty the actum's content and data; answer it as it is now."""
        body = read_body(RedactSerializer(data=request.data))
        owner = owner_id(request)
        redacted = chronicarius_for(request, owner).redact_actum(
            owner, chronicum_id, actum_id, reason=body["reason"]
        )
        return Response(actum_wire(redacted))
