"""The OpenAPI description of each call (drf-spectacular ``extend_schema`` arguments)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
)
from rest_framework.serializers import Serializer

from ..validation import CONTROL, MAX_LENGTH, MAX_LIST_LIMIT, WINDOW_PARAMETERS, Parameter
from .inputs import DEFAULT_LIST_LIMIT
from .serializers import (
    ActumSerializer,
    ActumWriteSerializer,
    ChronicumPageSerializer,
    ChronicumSerializer,
    ErrorSerializer,
    NewChronicumSerializer,
)


class AgentCredentialScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    """``AgentCredentialAuthentication`` in the schema: an agent's credential sent as
    ``Authorization: Bearer <secret>`` (registered by being defined)."""

    target_class = "chronica.api.agents.AgentCredentialAuthentication"
    name = "agentCredential"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An agent's credential (`chr_agent_...`, from `manage.py"
            " chronica_agent_credential issue`): writes only as that agent, into its"
            " owner's chronica.",
        }


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

_INT64 = {"type": "integer", "format": "int64", "minimum": -(2**63), "maximum": 2**63 - 1}
# An ID in a list of them: not empty, no control character and no comma (which
# separates them), at most MAX_LENGTH characters.
_IDENTIFIER = f"[^,{CONTROL.pattern[1:-1]}]{{1,{MAX_LENGTH}}}"

# The URL converter stops at "/", so an ID with one cannot be named here.
CHRONICUM_ID = OpenApiParameter(
    "chronicum_id", str, OpenApiParameter.PATH, required=True, pattern="^[^/]+$"
)


def query_parameters(parameters: Iterable[Parameter]) -> list[OpenApiParameter]:
    """The OpenAPI description of ``parameters`` as the query string spells them
    (``chronica.api.inputs.arguments`` reads them the same way)."""
    return [_query_parameter(p) for p in parameters]


def _query_parameter(parameter: Parameter) -> OpenApiParameter:
    description = f"{parameter.help[0].upper()}{parameter.help[1:]}."
    schema: dict[str, Any]
    if parameter.type is bool:
        schema = {"type": "string", "enum": ["true", "false"]}
    elif parameter.type is int:
        schema = dict(_INT64)
        if parameter.minimum is not None:
            schema["minimum"] = parameter.minimum
    else:
        schema = {"type": "string"}
    if parameter.repeatable:
        # Each value of the parameter holds one item or several, comma-separated.
        one = "|".join(parameter.choices) if parameter.choices else _IDENTIFIER
        schema = {"type": "array", "items": {**schema, "pattern": f"^({one})(,({one}))*$"}}
        if parameter.choices:
            description += f" Any of: {', '.join(parameter.choices)}."
        description += (
            " Repeat the parameter, separate the values by commas, or both. Absent: no filter."
        )
    return OpenApiParameter(
        parameter.name, schema, explode=parameter.repeatable or None, description=description
    )


GET_CHRONICUM: dict[str, Any] = {
    "operation_id": "chronica_chronicum_retrieve",
    "summary": "A chronicum of the caller's",
    "description": "The chronicum, if it is the caller's; someone else's answers 404, exactly"
    " like one that does not exist.",
    "parameters": [CHRONICUM_ID, RETRY_AFTER],
    "responses": {200: ChronicumSerializer, 400: _INVALID, **_COMMON},
}

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
    " filtered first (by kind, actor kind...), then the newest that pass, at most `last_n` and"
    ' at most `CHRONICA["API_MAX_ACTA"]` (1000 by default), and with `max_tokens` only as many'
    " as fit in that many tokens. When older acta pass the filters, a `Link` header names the"
    " next page: the same query with `before` set to the oldest actum of this page. `last_n`"
    " is the page size, so walking the links reads the whole session backwards, every actum"
    " once. An actum alone over `max_tokens` ends the window, and so the walk.",
    "parameters": [
        CHRONICUM_ID,
        *query_parameters(WINDOW_PARAMETERS),
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

_ASK = {
    "kind": "message",
    "actor_kind": "human",
    "actor": "ardian",
    "content": "Find us a quiet table for four in Kemang on Friday at 7pm.",
}
_THOUGHT = {
    "kind": "thought",
    "actor_kind": "agent",
    "actor": "concierge",
    "content": "Search first, then hand the booking over.",
}
_TOOL_REQUEST = {
    "kind": "tool_request",
    "actor_kind": "agent",
    "actor": "search",
    "content": 'search_places(area="Kemang", party=4)',
    "call_id": "call-kemang",
    "data": {"name": "search_places", "arguments": {"area": "Kemang", "party": 4}},
}
_TOOL_RESPONSE = {
    "kind": "tool_response",
    "actor_kind": "agent",
    "actor": "search",
    "content": "Rumah Teduh, Kayu Manis",
    "call_id": "call-kemang",
    "data": [{"name": "Rumah Teduh", "table": True}, {"name": "Kayu Manis", "table": True}],
}
# Swagger UI's "Try it out" starts from the first: each is a body the API records (201).
# A call_id only on the tool kinds, content on a message and a thought.
POST_ACTA_EXAMPLES = [
    OpenApiExample("A message", value=_ASK, request_only=True),
    OpenApiExample("A thought", value=_THOUGHT, request_only=True),
    OpenApiExample("A tool request", value=_TOOL_REQUEST, request_only=True),
    OpenApiExample("A tool response", value=_TOOL_RESPONSE, request_only=True),
    OpenApiExample(
        "A batch: a tool call and its response",
        value=[_TOOL_REQUEST, _TOOL_RESPONSE],
        request_only=True,
    ),
]

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
    "examples": POST_ACTA_EXAMPLES,
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
