"""chronica's errors, and a database that fails, as HTTP answers: one mapping,
:func:`api_exception`, which every chronica viewset's ``handle_exception`` applies.

Only chronica's own errors become 4xx answers. Any other exception passes through to
DRF's and Django's handlers (a 500 and the logs), except a database error: a JSON 503
the client may retry where a retry is safe, a JSON 500 that says so where a write may
have landed.
"""

from __future__ import annotations

import logging
import sqlite3
import sys
from typing import Any

from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import status, views
from rest_framework.exceptions import APIException, NotFound
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer

from ..errors import (
    ChronicaError,
    ChronicumExists,
    ChronicumNotFound,
    EmptyOwnerID,
    IdempotencyUnsupported,
    InvalidActum,
    InvalidQuery,
    NotPermitted,
    StateConflict,
    StoreUnsupported,
)

__all__ = [
    "BadRequest",
    "Conflict",
    "DatabaseFailed",
    "DatabaseUnavailable",
    "Forbidden",
    "IdempotencyNotImplemented",
    "LengthRequired",
    "NotImplementedByStore",
    "PayloadTooLarge",
    "StateNotAsExpected",
    "WriteMayHaveLanded",
    "api_exception",
    "exception_handler",
    "failed_to_connect",
    "not_found",
]

logger = logging.getLogger("chronica.api")

# The errors a caller's input causes.
BAD_INPUT: tuple[type[Exception], ...] = (InvalidActum, EmptyOwnerID, InvalidQuery)


class BadRequest(APIException):
    status_code = status.HTTP_400_BAD_REQUEST
    default_detail = "Bad request."
    default_code = "invalid"


class LengthRequired(APIException):
    status_code = status.HTTP_411_LENGTH_REQUIRED
    default_detail = "A request body needs a Content-Length header."
    default_code = "length_required"


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "payload_too_large"


class Forbidden(APIException):
    """A call an agent's credential does not allow: the JSON names the rule broken."""

    status_code = status.HTTP_403_FORBIDDEN
    default_detail = "This credential does not allow that."
    default_code = "not_permitted"

    def __init__(self, message: str, rule: str) -> None:
        super().__init__({"detail": message, "rule": rule})


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "That chronicum ID is taken."
    default_code = "chronicum_exists"


class StateNotAsExpected(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The state is not as the change expected."
    default_code = "state_conflict"


class IdempotencyNotImplemented(APIException):
    status_code = status.HTTP_501_NOT_IMPLEMENTED
    default_detail = "This server's chronica store does not support Idempotency-Key."
    default_code = "idempotency_unsupported"


class NotImplementedByStore(APIException):
    status_code = status.HTTP_501_NOT_IMPLEMENTED
    default_detail = "This server's chronica store cannot do that."
    default_code = "store_unsupported"


class DatabaseUnavailable(APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "The database cannot be reached; try again later."
    default_code = "database_unavailable"
    # Seconds, sent as Retry-After by DRF's exception handler: long enough for a
    # database restart or a failover, short for a waiting client.
    wait = 5


class DatabaseFailed(APIException):
    """A database error during a request that is safe to send again (a read, a delete,
    a write with an Idempotency-Key)."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "The database failed during the request; it is safe to retry: try again later."
    default_code = "database_failed"
    wait = DatabaseUnavailable.wait


class WriteMayHaveLanded(APIException):
    """A database error during a write without an Idempotency-Key: it may be stored."""

    status_code = status.HTTP_500_INTERNAL_SERVER_ERROR
    default_detail = (
        "The database failed during this write, which may have been stored. Read before"
        " retrying, or send the write with an Idempotency-Key header (the same key on every"
        " retry) so that a retry is stored at most once."
    )
    default_code = "write_outcome_unknown"


#: The methods whose request may be sent again as it is.
_RETRY_SAFE = frozenset({"GET", "HEAD", "OPTIONS", "DELETE"})


def api_exception(exc: Exception, method: str, keyed: bool) -> Exception:
    """The exception DRF answers for ``exc``, raised while serving a ``method`` request
    (``keyed``: it carries an ``Idempotency-Key``): chronica's errors and database errors
    as JSON answers, anything else as it is."""
    if isinstance(exc, ChronicaError):
        return _chronica_error(exc)
    if isinstance(exc, RequestDataTooBig):
        # Django would answer an HTML 400 page; this names the setting to raise.
        from django.conf import settings

        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return PayloadTooLarge(
            f"the request body is larger than DATA_UPLOAD_MAX_MEMORY_SIZE ({limit} bytes)"
        )
    if isinstance(exc, SuspiciousOperation):
        # Too many query parameters (DATA_UPLOAD_MAX_NUMBER_FIELDS), say: Django would
        # answer an HTML 400 page. Logged where Django logs it.
        logging.getLogger(f"django.security.{type(exc).__name__}").error(str(exc))
        return BadRequest(str(exc))
    if isinstance(exc, DatabaseError):
        return _database_error(exc, method, keyed)
    return exc


def exception_handler(exc: Exception, context: dict[str, Any]) -> HttpResponse | None:
    """DRF's ``exception_handler`` with chronica's mapping first: name it in
    ``REST_FRAMEWORK["EXCEPTION_HANDLER"]`` (``"chronica.api.errors.exception_handler"``)
    and the project's other DRF views (drf-spectacular's schema and docs, say) answer a
    database that fails, too many query parameters and chronica's errors in JSON, as
    chronica's routes do."""
    request = context.get("request")
    keyed = request is not None and "Idempotency-Key" in request.headers
    method = "" if request is None else request.method or ""
    response = views.exception_handler(api_exception(exc, method, keyed), context)
    renderer = getattr(request, "accepted_renderer", None)
    if response is None or isinstance(renderer, JSONRenderer | BrowsableAPIRenderer):
        return response
    # An error in YAML (the schema's default), or in no format at all when the format
    # could not be chosen: JSON, as every error of the API is.
    answer = JsonResponse(response.data, status=response.status_code)
    for name, value in response.items():
        if name.lower() != "content-type":
            answer[name] = value
    return answer


# Exempt as DRF's views are: a POST to no route is a 404, never a CSRF page.
@csrf_exempt
def not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    """A JSON 404 for a path under the API that names no route (an ID holding a ``/``,
    sent as ``%2F``, or a misspelt path): the same body as a chronicum that is not the
    caller's. ``chronica.api.urls`` ends with it for its own paths; a project ends its
    API's prefix with it (``re_path(r"^api/", not_found)``, last)."""
    return JsonResponse({"detail": str(NotFound.default_detail)}, status=404)


def _chronica_error(exc: ChronicaError) -> Exception:
    if isinstance(exc, ChronicumNotFound):
        # Neither the ID nor which of the two cases it was: someone else's chronicum
        # must look exactly like one that never existed.
        return NotFound()
    if isinstance(exc, ChronicumExists):
        return Conflict()
    if isinstance(exc, NotPermitted):
        return Forbidden(str(exc), exc.rule)
    if isinstance(exc, IdempotencyUnsupported):
        return IdempotencyNotImplemented()
    if isinstance(exc, StoreUnsupported):
        # The project chose a store without that capability. Its class is the
        # server's business: the log names it, the client learns only "not here".
        logger.warning("chronica API: %s", exc)
        return NotImplementedByStore()
    if isinstance(exc, StateConflict):
        return StateNotAsExpected(str(exc))
    if isinstance(exc, BAD_INPUT):
        return BadRequest(str(exc))
    return exc


def _database_error(exc: DatabaseError, method: str, keyed: bool) -> APIException:
    """A database that could not be connected to: 503, nothing was sent. An error on an
    open connection (a backend terminated, a statement cancelled): a read, a delete or
    a keyed write can be sent again as it is (503 with ``Retry-After``); a write without
    a key may have been stored before the error (a 500 that says so, and how to retry
    safely)."""
    if failed_to_connect(exc):
        logger.error("chronica API: the database cannot be reached", exc_info=exc)
        return DatabaseUnavailable()
    logger.error("chronica API: database error during %s", method, exc_info=exc)
    if method.upper() in _RETRY_SAFE or keyed:
        return DatabaseFailed()
    return WriteMayHaveLanded()


def failed_to_connect(exc: BaseException) -> bool:
    """Whether ``exc`` is Django's error for a database connection that could not be
    opened, so that no statement was sent: told by what the driver raised (the error
    Django wraps is its ``__cause__``).

    - psycopg: an error of the connection attempt (psycopg gives it the attempt's
      ``pgconn``; refused, unknown host, authentication, too many clients), a
      ``ConnectionTimeout``, or a pool that gave no connection in time
      (``psycopg_pool.PoolTimeout``, Django's ``"pool"`` option).
    - sqlite3: ``SQLITE_CANTOPEN``.

    Anything else is not known to be harmless to retry (an error on an open
    connection may have had effects), and so is not one.
    """
    if not isinstance(exc, OperationalError | InterfaceError):
        return False
    cause = exc.__cause__
    if isinstance(cause, sqlite3.Error):
        code = getattr(cause, "sqlite_errorcode", None)
        return isinstance(code, int) and code & 0xFF == sqlite3.SQLITE_CANTOPEN
    psycopg = sys.modules.get("psycopg")
    if psycopg is None or not isinstance(cause, psycopg.Error):
        return False
    if isinstance(cause, psycopg.errors.ConnectionTimeout) or cause.pgconn is not None:
        return True
    pool = sys.modules.get("psycopg_pool")
    return pool is not None and isinstance(cause, pool.PoolTimeout)
