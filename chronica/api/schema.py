"""The OpenAPI description of each call (drf-spectacular ``extend_schema`` arguments)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, PolymorphicProxySerializer
from rest_framework.serializers import Serializer

from ..validation import MAX_LENGTH
from ..values import ActorKind, ActumKind
from .serializers import ActumSerializer, ActumWriteSerializer, ChronicumSerializer, ErrorSerializer

_ERROR = ErrorSerializer
_NOT_SIGNED_IN = OpenApiResponse(
    _ERROR,
    description="Not signed in: 401 with WWW-Authenticate where the project's authentication"
    " can ask for credentials (Basic, Token), else 403.",
)
_NOT_FOUND = OpenApiResponse(
    _ERROR, description="No such chronicum, or not the caller's: the same body in both cases."
)
_INVALID = OpenApiResponse(_ERROR, description="What is wrong with the request.")
_UNAVAILABLE = OpenApiResponse(
    _ERROR, description="The database cannot be reached: retry after Retry-After seconds."
)
_COMMON: dict[int, Any] = {
    401: _NOT_SIGNED_IN,
    403: _NOT_SIGNED_IN,
    404: _NOT_FOUND,
    503: _UNAVAILABLE,
}
RETRY_AFTER = OpenApiParameter(
    "Retry-After",
    {"type": "string", "pattern": "^[0-9]+$"},
    OpenApiParameter.HEADER,
    description="Seconds to wait before retrying.",
    response=[503],
)

# The URL converter stops at "/", so an ID with one cannot be named here.
CHRONICUM_ID = OpenApiParameter(
    "chronicum_id", str, OpenApiParameter.PATH, required=True, pattern="^[^/]+$"
)


def _kinds(name: str, values: list[str]) -> OpenApiParameter:
    one = "|".join(values)
    return OpenApiParameter(
        name,
        {"type": "array", "items": {"type": "string", "pattern": f"^({one})(,({one}))*$"}},
        explode=True,
        description=f"Keep only these {name} values ({', '.join(values)}); repeat the"
        " parameter, separate them by commas, or both. Absent: no filter.",
    )


GET_CHRONICUM: dict[str, Any] = {
    "operation_id": "chronica_chronicum_retrieve",
    "summary": "A chronicum of the caller's",
    "description": "The chronicum, if it is the caller's; someone else's answers 404, exactly"
    " like one that does not exist.",
    "parameters": [CHRONICUM_ID, RETRY_AFTER],
    "responses": {200: ChronicumSerializer, 400: _INVALID, **_COMMON},
}

GET_ACTA: dict[str, Any] = {
    "operation_id": "chronica_acta_list",
    "summary": "The context window: filtered, then the last N, oldest first",
    "description": "The acta of the chronicum, oldest first in the order they were recorded:"
    " filtered by kind and actor kind first, then cut to the last `last_n`.",
    "parameters": [
        CHRONICUM_ID,
        _kinds("kind", [k.value for k in ActumKind]),
        _kinds("actor_kind", [k.value for k in ActorKind]),
        OpenApiParameter(
            "last_n",
            {"type": "integer", "format": "int64", "minimum": -(2**63), "maximum": 2**63 - 1},
            description="After filtering, keep the last N acta. Absent or <= 0: all.",
        ),
        RETRY_AFTER,
    ],
    "responses": {200: ActumSerializer(many=True), 400: _INVALID, **_COMMON},
}


def _one_or_many(name: str, serializer: type[Serializer[Any]], description: str) -> Any:
    """One object or an array of them (``oneOf``), as the component ``name``."""
    return PolymorphicProxySerializer(
        component_name=name,
        serializers=[serializer, serializer(many=True)],
        resource_type_field_name=None,
        many=False,
        help_text=description,
    )


_RECORDED = _one_or_many(
    "Recorded", ActumSerializer, "The stored actum for one, the stored list for a batch."
)

POST_ACTA: dict[str, Any] = {
    "operation_id": "chronica_acta_create",
    "summary": "Record an actum or a batch (creates the chronicum on its first actum)",
    "description": "A JSON object records one actum; a JSON array records a batch, all of it"
    " or nothing, one after the other with no other actum between them. chronica gives each"
    " its ID and time. The first actum creates the chronicum for the caller. An empty array"
    ' writes and creates nothing (200, `[]`). A batch holds at most `CHRONICA["API_MAX_ACTA"]`'
    " acta. With an `Idempotency-Key` already used in this chronicum, nothing is written and"
    " what was stored the first time comes back, in the shape of this request: a list for an"
    " array, the first actum for an object.",
    "parameters": [
        CHRONICUM_ID,
        OpenApiParameter(
            "Idempotency-Key",
            # Printable ASCII but the comma, which joins a header sent twice.
            {"type": "string", "maxLength": MAX_LENGTH, "pattern": r"^[\x20-\x2B\x2D-\x7E]*$"},
            OpenApiParameter.HEADER,
            description="A retry with a key already used in this chronicum returns what was"
            " stored the first time (200) and writes nothing. Sent once; printable ASCII"
            " with no comma (a header sent twice arrives as two values joined by one).",
        ),
        OpenApiParameter(
            "Idempotent-Replayed",
            {"type": "string", "enum": ["true"]},
            OpenApiParameter.HEADER,
            description="Set on a replay.",
            response=[200],
        ),
        RETRY_AFTER,
    ],
    "request": _one_or_many(
        "ActumOrBatch", ActumWriteSerializer, "One actum (an object) or a batch (an array)."
    ),
    "responses": {
        201: OpenApiResponse(_RECORDED, description="Recorded."),
        200: OpenApiResponse(
            _RECORDED,
            description="A replay (header Idempotent-Replayed): what the first request with"
            " this key stored. Or an empty batch: `[]`, nothing written.",
        ),
        400: _INVALID,
        **_COMMON,
        411: OpenApiResponse(_ERROR, description="A chunked body: send it with Content-Length."),
        413: OpenApiResponse(
            _ERROR, description="A body over the project's DATA_UPLOAD_MAX_MEMORY_SIZE."
        ),
        501: OpenApiResponse(_ERROR, description="Idempotency-Key given; the store cannot."),
    },
}
