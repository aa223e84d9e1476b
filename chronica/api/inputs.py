"""What a request says, read into the arguments of ``chronica.services``.

Only the shape of the input is checked here (a query parameter's spelling, a
header's bytes, the body's JSON type); the values are judged by the services,
so that the API refuses exactly what the library refuses, with its message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, cast
from urllib.parse import unquote_to_bytes, urlsplit

from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.serializers import BaseSerializer
from rest_framework.settings import api_settings

from .. import services
from ..validation.identifiers import CONTROL
from ..validation.parameters import Parameter
from ..values import Actum
from .bodies import error_message, json_type
from .errors import BadRequest, LengthRequired
from .serializers import ActumWriteSerializer, NewChronicumSerializer

__all__ = [
    "DEFAULT_LIST_LIMIT",
    "IDEMPOTENCY_KEY",
    "acta_from_body",
    "arguments",
    "check_length",
    "check_path",
    "check_query",
    "flag",
    "idempotency_key",
    "integer",
    "listed",
    "listing_limit",
    "names",
    "new_chronicum_id",
    "owner_id",
    "read_body",
]

IDEMPOTENCY_KEY = "Idempotency-Key"
#: The page size of the chronica listing when ``?limit=`` is not given.
DEFAULT_LIST_LIMIT = 100
_INTEGER = re.compile(r"[+-]?[0-9]{1,19}")
_INT64 = range(-(2**63), 2**63)


def owner_id(request: Request) -> str:
    """The owner of everything this request touches: ``CHRONICA["OWNER_ID"](request.user)``,
    through the one mapping every part of a project uses."""
    if isinstance(request.auth, services.AgentIdentity):
        return request.auth.owner_id  # an agent's credential: its owner's
    return services.owner_id_for(request.user)


def check_query(request: Request, known: frozenset[str]) -> None:
    """Refuse query parameters the call does not take: ignored, a misspelt filter
    (``?kinds=``, ``?limit=``) would answer with everything."""
    unknown = [
        name
        for name in request.query_params
        if name not in known and name != api_settings.URL_FORMAT_OVERRIDE
    ]
    if unknown:
        takes = ", ".join(sorted(known)) if known else "none"
        raise BadRequest(
            f"unknown query parameter(s): {', '.join(unknown)} (this call takes: {takes})"
        )


def check_path(request: Request) -> None:
    """Refuse a path whose percent-encoded bytes are not UTF-8 (``%FF``): the server
    hands Django such a path with each bad byte as U+FFFD (uvicorn) or as the three
    characters ``%FF`` (Django under WSGI), either way a chronicum ID the client never
    wrote. Told from the path as it was sent: ASGI's ``raw_path``, or the request line
    a WSGI server keeps (gunicorn's ``RAW_URI``, uWSGI's ``REQUEST_URI``); a server
    that keeps neither hands over only the decoded path, which is taken as it is."""
    http = request._request
    scope = getattr(http, "scope", None)
    raw = scope.get("raw_path") if scope is not None else None
    if scope is None:
        uri = http.META.get("RAW_URI") or http.META.get("REQUEST_URI")
        # WSGI's strings carry the bytes as sent, one character each.
        raw = None if uri is None else str(uri).encode("latin-1", "replace")
    if raw is None:
        return
    path = urlsplit(bytes(raw)).path
    try:
        unquote_to_bytes(path).decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest(
            "the path is not UTF-8: a chronicum ID in a URL is percent-encoded UTF-8"
        ) from None


def check_length(request: Request) -> None:
    """Refuse a body sent in chunks (``Transfer-Encoding``, no ``Content-Length``).

    Django reads a body by its Content-Length: under WSGI it cannot read a chunked
    one at all, and under ASGI DRF takes a body with no length for an empty one.
    Either way the body would be silently lost, so the client is told to send it
    with its length (411), whatever the server.
    """
    meta = request.META
    if meta.get("HTTP_TRANSFER_ENCODING") and not meta.get("CONTENT_LENGTH"):
        raise LengthRequired(
            "send the body with a Content-Length header: a chunked body (Transfer-Encoding)"
            " is not read"
        )


def listed(request: Request, name: str) -> list[str]:
    """A query parameter given repeatedly (``?kind=a&kind=b``), comma-separated
    (``?kind=a,b``) or both; each item as given, for the services to judge."""
    return [item for value in request.query_params.getlist(name) for item in value.split(",")]


def integer(request: Request, name: str) -> int | None:
    """A query parameter that is a 64-bit integer in decimal digits; ``None`` when absent."""
    raw = request.query_params.get(name)
    if raw is None:
        return None
    if not _INTEGER.fullmatch(raw) or int(raw) not in _INT64:
        raise BadRequest(f"{name} must be a 64-bit integer, not {raw[:40]!r}")
    return int(raw)


def flag(request: Request, name: str) -> bool:
    """A query parameter that is ``true`` or ``false``; absent is false."""
    raw = request.query_params.get(name)
    if raw is None or raw == "false":
        return False
    if raw == "true":
        return True
    raise BadRequest(f"{name} must be true or false, not {raw[:40]!r}")


def listing_limit(request: Request) -> int:
    """``?limit=``: how many chronica a page of the listing holds (the services judge
    the range); absent, ``DEFAULT_LIST_LIMIT``."""
    limit = integer(request, "limit")
    return DEFAULT_LIST_LIMIT if limit is None else limit


def idempotency_key(request: Request) -> str | None:
    """The ``Idempotency-Key`` header: printable ASCII, sent once.

    Servers hand header bytes over as Latin-1, so a UTF-8 key would be stored as
    mojibake: keys are ASCII. A header sent twice reaches Django as the two
    values joined by a comma (by the WSGI server, or by Django's ASGI handler),
    which cannot be told from one key holding a comma: keys hold none.
    """
    key = request.headers.get(IDEMPOTENCY_KEY)
    if key is None:
        return None
    if not key.isascii():
        raise BadRequest(f"{IDEMPOTENCY_KEY} must be ASCII: a key is printable ASCII characters")
    if CONTROL.search(key):
        raise BadRequest(
            f"{IDEMPOTENCY_KEY} must not contain control characters (CR, LF, tab, NUL...)"
        )
    if "," in key:
        raise BadRequest(
            f"{IDEMPOTENCY_KEY} must be sent once and hold no comma: two headers arrive"
            " joined by a comma"
        )
    return key


def names(parameters: Iterable[Parameter]) -> frozenset[str]:
    """The query parameters that spell ``parameters``."""
    return frozenset(p.name for p in parameters)


def arguments(request: Request, parameters: Iterable[Parameter]) -> dict[str, Any]:
    """The keyword arguments of ``chronica.services`` that the request's query gives
    for ``parameters`` (see ``chronica.validation.PARAMETERS``): each one the query
    names, read as its type says; the others keep the services' defaults."""
    given = request.query_params
    found: dict[str, Any] = {}
    for parameter in parameters:
        name = parameter.name
        if name not in given:
            continue
        if parameter.repeatable:
            found[parameter.argument] = listed(request, name)
        elif parameter.type is bool:
            found[parameter.argument] = flag(request, name)
        elif parameter.type is int:
            found[parameter.argument] = integer(request, name)
        else:
            found[parameter.argument] = given.get(name)
    return found


def new_chronicum_id(data: Any) -> str | None:
    """The ID a body ``{}`` or ``{"id": "<id>"}`` asks for; ``None`` for a new one
    (``NewChronicumSerializer``)."""
    return cast(str | None, read_body(NewChronicumSerializer(data=data))["id"])


def acta_from_body(chronicum_id: str, data: Any, *, agent: bool = False) -> list[Actum]:
    """The acta a JSON body describes (``ActumWriteSerializer``): one object is one
    actum, an array is a batch. An ``agent`` (a credential) may leave out ``actor`` and
    ``actor_kind``."""
    if not isinstance(data, list | dict):
        raise BadRequest(
            "the body must be a JSON object (an actum) or an array of them (a batch),"
            f" not {json_type(data)}"
        )
    many = isinstance(data, list)
    context = {"chronicum_id": chronicum_id, "agent": agent}
    validated = read_body(ActumWriteSerializer(data=data, many=many, context=context))
    return list(validated) if many else [cast(Actum, validated)]


def read_body(serializer: BaseSerializer[Any]) -> Any:
    """What ``serializer`` read from its data; a 400 saying what it refused."""
    try:
        serializer.is_valid(raise_exception=True)
    except ValidationError as exc:
        raise BadRequest(error_message(exc.detail)) from None
    return serializer.validated_data
