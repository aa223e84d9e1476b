"""The HTTP face of ``chronica.services``: read a chronicum, read and write its acta.

The views turn HTTP into the arguments of ``chronica.services`` and its errors
back into HTTP; every rule stays in the services. The owner is always
``request.user`` passed through ``CHRONICA["OWNER_ID"]``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, cast

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import APIException, NotFound
from rest_framework.permissions import AllowAny, BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from .. import services
from ..conf import chronica_settings
from ..errors import ChronicumNotFound, IdempotencyUnsupported
from ..values import Actum
from . import schema
from .parsers import StrictJSONParser
from .serializers import ActumSerializer, ChronicumSerializer

__all__ = ["ActaView", "ChronicumView"]

IDEMPOTENCY_KEY = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
_REQUIRED_FIELDS = ("kind", "actor_kind", "actor")
_INTEGER = re.compile(r"[+-]?[0-9]{1,19}")
_INT64 = range(-(2**63), 2**63)


class BadRequest(APIException):
    status_code = status.HTTP_400_BAD_REQUEST
    default_detail = "Bad request."
    default_code = "invalid"


class IdempotencyNotImplemented(APIException):
    status_code = status.HTTP_501_NOT_IMPLEMENTED
    default_detail = "This server's chronica store does not support Idempotency-Key."
    default_code = "idempotency_unsupported"


@contextmanager
def chronica_errors() -> Iterator[None]:
    """Turn chronica's errors into HTTP answers; every other error passes through."""
    try:
        yield
    except ChronicumNotFound:
        # Neither the ID nor which of the two cases it was: someone else's
        # chronicum must look exactly like one that never existed.
        raise NotFound() from None
    except IdempotencyUnsupported:
        raise IdempotencyNotImplemented() from None
    except ValueError as exc:  # InvalidActum, EmptyOwnerID, an unknown kind
        raise BadRequest(str(exc)) from None


def owner_id(request: Request) -> str:
    """The owner of everything this request touches: ``CHRONICA["OWNER_ID"](request.user)``."""
    return chronica_settings.owner_id_function()(request.user)


def listed(request: Request, name: str) -> list[str]:
    """A query parameter given repeatedly (``?kind=a&kind=b``), comma-separated
    (``?kind=a,b``) or both; each item as given, for the services to judge."""
    return [item for value in request.query_params.getlist(name) for item in value.split(",")]


def last_n(request: Request) -> int:
    """``?last_n=``: a 64-bit integer; absent means no limit."""
    raw = request.query_params.get("last_n")
    if raw is None:
        return 0
    if not _INTEGER.fullmatch(raw) or int(raw) not in _INT64:
        raise BadRequest(f"last_n must be a 64-bit integer, not {raw[:40]!r}")
    return int(raw)


def actum_from_body(chronicum_id: str, data: Any) -> Actum:
    """The actum a JSON body describes. Only its shape is checked here: the values
    (types included) are judged by ``chronica.services``. Other keys are ignored,
    as the ID and the time are chronica's to give."""
    if not isinstance(data, dict):
        raise BadRequest(f"the body must be a JSON object, not {type(data).__name__}")
    missing = [name for name in _REQUIRED_FIELDS if name not in data]
    if missing:
        raise BadRequest(f"missing field(s): {', '.join(missing)}")
    return Actum(
        chronicum_id=chronicum_id,
        kind=data["kind"],
        actor_kind=data["actor_kind"],
        actor=data["actor"],
        content=data.get("content", ""),
    )


class ChronicaAPIView(APIView):
    """JSON in; the project's authentication; signed in, at least.

    The project's ``REST_FRAMEWORK`` authentication and permission classes are
    read on each request (not once, when DRF was imported), so that changing
    them, ``override_settings`` included, takes effect.
    """

    parser_classes = [StrictJSONParser]

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, RequestDataTooBig):
            # Django would answer an HTML page; an API client gets the JSON it expects.
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            exc = BadRequest(f"the request body is larger than {limit} bytes")
        return super().handle_exception(exc)

    def get_authenticators(self) -> list[BaseAuthentication]:
        classes = cast(
            Sequence[type[BaseAuthentication]], api_settings.DEFAULT_AUTHENTICATION_CLASSES
        )
        return [authentication() for authentication in classes]

    def get_permissions(self) -> Sequence[BasePermission]:
        # Never below signed in, whatever the project allows: an anonymous user
        # has no owner ID.
        policy = cast(Sequence[type[BasePermission]], api_settings.DEFAULT_PERMISSION_CLASSES)
        return [IsAuthenticated(), *(p() for p in policy if p is not AllowAny)]


class ChronicumView(ChronicaAPIView):
    """``GET chronica/<id>/``: the chronicum, if it is the caller's."""

    @extend_schema(**schema.GET_CHRONICUM)
    def get(self, request: Request, chronicum_id: str) -> Response:
        with chronica_errors():
            chronicum = services.get_chronicum(owner_id(request), chronicum_id)
        return Response(ChronicumSerializer(chronicum).data)


class ActaView(ChronicaAPIView):
    """``GET chronica/<id>/acta/``: the context window. ``POST``: record one actum."""

    @extend_schema(**schema.GET_ACTA)
    def get(self, request: Request, chronicum_id: str) -> Response:
        with chronica_errors():
            acta = services.get_acta(
                owner_id(request),
                chronicum_id,
                kinds=listed(request, "kind"),
                actor_kinds=listed(request, "actor_kind"),
                last_n=last_n(request),
            )
        return Response(ActumSerializer(acta, many=True).data)

    @extend_schema(**schema.POST_ACTUM)
    def post(self, request: Request, chronicum_id: str) -> Response:
        actum = actum_from_body(chronicum_id, request.data)
        with chronica_errors():
            recorded = services.record(
                owner_id(request), [actum], idempotency_key=request.headers.get(IDEMPOTENCY_KEY)
            )
        body = ActumSerializer(recorded.acta[0]).data
        if recorded.replayed:
            return Response(body, status=status.HTTP_200_OK, headers={REPLAYED: "true"})
        return Response(body, status=status.HTTP_201_CREATED)
