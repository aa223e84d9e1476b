"""chronica's errors, and a database that cannot be reached, as HTTP answers.

Only chronica's own errors become 4xx answers. Any other exception raised by a
call into ``chronica.services`` passes through to Django's handler (a 500 and
the logs), except a database that cannot be connected to: a 503 the client may
retry.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import DatabaseError, InterfaceError, OperationalError
from django.db.backends.base.base import BaseDatabaseWrapper
from rest_framework import status
from rest_framework.exceptions import APIException, NotFound

from ..errors import (
    ChronicumExists,
    ChronicumNotFound,
    EmptyOwnerID,
    IdempotencyUnsupported,
    InvalidActum,
    InvalidQuery,
    NotPermitted,
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
    "WriteMayHaveLanded",
    "chronica_errors",
    "database_failure",
    "unreachable_database",
]

logger = logging.getLogger("chronica.api")

# The errors a caller's input causes.
BAD_INPUT: tuple[type[Exception], ...] = (InvalidActum, EmptyOwnerID, InvalidQuery)

# The methods in which a Django database backend opens a connection.
_CONNECTING = frozenset({"connect", "get_new_connection", "init_connection_state"})


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


def database_failure(exc: BaseException, method: str, keyed: bool) -> APIException | None:
    """A JSON answer for ``exc`` if it is a database error on an open connection (a
    backend terminated, a statement cancelled), else ``None``.

    A read, a delete or a keyed write can be sent again as it is: 503 with
    ``Retry-After``. A write without a key may have been stored before the error: a
    500 that says so, and how to retry safely.
    """
    if not isinstance(exc, DatabaseError):
        return None
    logger.error("chronica API: database error during %s", method, exc_info=exc)
    if method.upper() in _RETRY_SAFE or keyed:
        return DatabaseFailed()
    return WriteMayHaveLanded()


@contextmanager
def chronica_errors() -> Iterator[None]:
    """Turn chronica's errors raised by a ``chronica.services`` call into HTTP answers;
    anything else passes through. Wrap the services call only, so that no error
    of the project's own code (``CHRONICA["OWNER_ID"]``, say) becomes a 4xx."""
    try:
        yield
    except ChronicumNotFound:
        # Neither the ID nor which of the two cases it was: someone else's
        # chronicum must look exactly like one that never existed.
        raise NotFound() from None
    except ChronicumExists:
        raise Conflict() from None
    except NotPermitted as exc:
        raise Forbidden(str(exc), exc.rule) from None
    except IdempotencyUnsupported:
        raise IdempotencyNotImplemented() from None
    except StoreUnsupported as exc:
        # The project chose a store without that capability. Its class is the
        # server's business: the log names it, the client learns only "not here".
        logger.warning("chronica API: %s", exc)
        raise NotImplementedByStore() from None
    except BAD_INPUT as exc:
        raise BadRequest(str(exc)) from None


def unreachable_database(exc: BaseException) -> DatabaseUnavailable | None:
    """A 503 for ``exc`` if it is a database failing to open a connection, else ``None``.

    Only those are safe to retry blindly: an error on an open connection (a
    statement cancelled, a connection cut mid-commit) may have had effects, so it
    stays a 500 for the logs. Told apart by where it was raised: inside the
    database backend's connect.
    """
    if not isinstance(exc, OperationalError | InterfaceError):
        return None
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_name in _CONNECTING and isinstance(
            frame.f_locals.get("self"), BaseDatabaseWrapper
        ):
            logger.error("chronica API: the database cannot be reached", exc_info=exc)
            return DatabaseUnavailable()
        tb = tb.tb_next
    return None
