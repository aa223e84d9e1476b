"""``POST <prefix>/chronica/<id>/acta/<actum_id>/redact/``: empty one actum's content and
data (``chronica.services.redact_actum``)."""

from __future__ import annotations

from typing import Any

from django.urls import re_path
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from . import schema
from .agents import chronicarius_for
from .bodies import check_body
from .inputs import owner_id, read_body
from .routers import optional_slash
from .serializers import ActumSerializer
from .views import BaseViewSet
from .wire import actum_wire

__all__ = ["REDACT_ACTUM", "ActumViewSet", "RedactSerializer", "redact_patterns"]


@extend_schema_serializer(component_name="RedactRequest")
class RedactSerializer(serializers.Serializer[Any]):
    """Why the actum is redacted (kept with it); optional."""

    reason = serializers.CharField(
        required=False, default="", allow_blank=True, max_length=1000, trim_whitespace=False
    )

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        check_body(data, self.fields, '{} or {"reason": ...}')
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


class ActumViewSet(BaseViewSet):
    """One actum of a chronicum: its redaction (``chronicum-acta-redact``).

    Not an action of ``ChronicumViewSet``: its route names two IDs, which a router on
    regular expressions and one on path converters spell differently; it is routed
    by :data:`redact_patterns`, which ``chronica.api.urls`` includes (a project that
    routes ``ChronicumViewSet`` with a router of its own adds them too)."""

    @extend_schema(**REDACT_ACTUM)
    def redact(self, request: Request, chronicum_id: str, actum_id: str) -> Response:
        """Empty the actum's content and data; answer it as it is now."""
        body = read_body(RedactSerializer(data=request.data))
        owner = owner_id(request)
        redacted = chronicarius_for(request, owner).redact_actum(
            owner, chronicum_id, actum_id, reason=body["reason"]
        )
        return Response(actum_wire(redacted))


redact_patterns = optional_slash(
    [
        re_path(
            r"^chronica/(?P<chronicum_id>[^/]+)/acta/(?P<actum_id>[^/]+)/redact/$",
            ActumViewSet.as_view({"post": "redact"}),
            name="chronicum-acta-redact",
        )
    ]
)
"""The redaction's route, with and without its trailing slash."""
