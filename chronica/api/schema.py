"""The OpenAPI description of each call (drf-spectacular ``extend_schema`` arguments)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, PolymorphicProxySerializer
from rest_framework.serializers import Serializer

from ..validation import MAX_LENGTH, MAX_LIST_LIMIT
from ..values import ActorKind, ActumKind
from .inputs import DEFAULT_LIST_LIMIT
from .serializers import (
    ActumSerializer,
    ActumWriteSerializer,
    ChronicumPageSerializer,
    ChronicumSerializer,
    ErrorSerializer,
    NewChronicumSerializer,
)

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
_COMMON_NO_404: dict[int, Any] = {401: _NOT_SIGNED_IN, 403: _NOT_SIGNED_IN, 503: _UNAVAILABLE}
_COMMON: dict[int, Any] = {**_COMMON_NO_404, 404: _NOT_FOUND}
_LENGTH_REQUIRED = OpenApiResponse(
    _ERROR, description="A chunked body: send it with Content-Length."
)
_TOO_LARGE = OpenApiResponse(
    _ERROR, description="A body over the project's DATA_UPLOAD_MAX_MEMORY_SIZE."
)
_STORE_CANNOT = OpenApiResponse(_ERROR, description="The server's store cannot do this.")
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

_INT64 = {"type": "integer", "format": "int64", "minimum": -(2**63), "maximum": 2**63 - 1}
_NEXT = OpenApiParameter(
    "Link",
    {"type": "string", "pattern": '^<[^>]+>; rel="next"$'},
    OpenApiParameter.HEADER,
    description='`<URL>; rel="next"` (RFC 8288): the next, older page, when an older actum'
    " passes the filters. Follow it until an answer has none; a page may be empty.",
    response=[200],
)

GET_ACTA: dict[str, Any] = {
    "operation_id": "chronica_acta_list",
    "summary": "The context window: filtered, then the newest that fit, oldest first",
    "description": "The acta of the chronicum, oldest first in the order they were recorded:"
    " filtered by kind and actor kind first, then the newest that pass, at most `last_n` and"
    ' at most `CHRONICA["API_MAX_ACTA"]` (1000 by default), and with `max_tokens` only as many'
    " as fit in that many tokens. When older acta pass the filters, a `Link` header names the"
    " next page: the same query with `before` set to the oldest actum of this page. `last_n`"
    " is the page size, so walking the links reads the whole session backwards, every actum"
    " once. An actum alone over `max_tokens` ends the window, and so the walk.",
    "parameters": [
        CHRONICUM_ID,
        _kinds("kind", [k.value for k in ActumKind]),
        _kinds("actor_kind", [k.value for k in ActorKind]),
        OpenApiParameter(
            "last_n",
            _INT64,
            description="After filtering, keep the newest N acta (and page by N). Absent or"
            ' <= 0: as many as `CHRONICA["API_MAX_ACTA"]` allows.',
        ),
        OpenApiParameter(
            "max_tokens",
            {**_INT64, "minimum": 0},
            description="After filtering, only the newest acta whose token counts add up to at"
            " most N; the first that does not fit ends the window. Absent: no budget.",
        ),
        OpenApiParameter(
            "whole_tool_calls",
            {"type": "string", "enum": ["true", "false"]},
            description="`true`: leave out every tool response whose tool request (the same"
            " `call_id`) is not on this page, so that no model gets a result without its call.",
        ),
        OpenApiParameter(
            "before",
            str,
            description="An actum ID of this chronicum: the window is taken from the acta"
            " recorded before it (the `Link` header sets it). Another ID: 400.",
        ),
        _NEXT,
        RETRY_AFTER,
    ],
    "responses": {200: ActumSerializer(many=True), 400: _INVALID, **_COMMON},
}

LIST_CHRONICA: dict[str, Any] = {
    "operation_id": "chronica_list",
    "summary": "The caller's chronica, latest activity first",
    "description": "The caller's chronica, the one with the latest `last_activity_at` first"
    " (ties by ID), `limit` a page. `next` is the URL of the next page, or null on the last:"
    " its `cursor` holds the place where this page ended, so that no chronicum is listed twice"
    " or missed when others are written meanwhile (one that is written moves to the front).",
    "parameters": [
        OpenApiParameter(
            "limit",
            {"type": "integer", "minimum": 1, "maximum": MAX_LIST_LIMIT},
            description=f"Chronica a page, 1 to {MAX_LIST_LIMIT}. Absent: {DEFAULT_LIST_LIMIT}.",
        ),
        OpenApiParameter(
            "cursor",
            str,
            description="Where the page starts, as the `next` URL of the previous page gives"
            " it. Anything else: 400.",
        ),
        RETRY_AFTER,
    ],
    "responses": {
        200: ChronicumPageSerializer,
        400: _INVALID,
        **_COMMON_NO_404,
        501: _STORE_CANNOT,
    },
}

CREATE_CHRONICUM: dict[str, Any] = {
    "operation_id": "chronica_create",
    "summary": "Start a chronicum (a new unguessable ID, or the one given)",
    "description": "Creates an empty chronicum for the caller. With no ID, chronica mints an"
    " unguessable one: chronicum IDs are global, the first owner to use one gets it. An ID"
    " that is taken, by anyone, is a 409.",
    "parameters": [
        OpenApiParameter(
            "Location",
            str,
            OpenApiParameter.HEADER,
            description="The new chronicum's URL.",
            response=[201],
        ),
        RETRY_AFTER,
    ],
    "request": NewChronicumSerializer,
    "responses": {
        201: ChronicumSerializer,
        400: _INVALID,
        **_COMMON_NO_404,
        409: OpenApiResponse(_ERROR, description="That ID is taken."),
        411: _LENGTH_REQUIRED,
        413: _TOO_LARGE,
    },
}

DELETE_CHRONICUM: dict[str, Any] = {
    "operation_id": "chronica_destroy",
    "summary": "Delete a chronicum of the caller's and all its acta",
    "description": "The chronicum and every actum of it are gone. Someone else's, or a missing"
    " one, answers 404 exactly like a read. A write racing with the delete lands before it"
    " (and goes with it) or after it, in the chronicum created again by that write.",
    "parameters": [CHRONICUM_ID, RETRY_AFTER],
    "request": None,
    "responses": {
        204: OpenApiResponse(description="Deleted."),
        400: _INVALID,
        **_COMMON,
        501: _STORE_CANNOT,
    },
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
        411: _LENGTH_REQUIRED,
        413: _TOO_LARGE,
        501: OpenApiResponse(
            _ERROR, description="Idempotency-Key given, or a batch; the store cannot."
        ),
    },
}
