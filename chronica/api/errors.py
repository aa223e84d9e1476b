"""chronica's errors as HTTP answers.

Only chronica's own errors become 4xx answers: any other exception raised by a
call into ``chronica.services`` passes through to Django's handler (a 500 and
the logs).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rest_framework import status
from rest_framework.exceptions import APIException, NotFound

from ..errors import ChronicumNotFound, EmptyOwnerID, IdempotencyUnsupported, InvalidActum

__all__ = ["BadRequest", "IdempotencyNotImplemented", "chronica_errors"]

# The errors a caller's input causes. ValueError stands for the query errors
# the services raise today (an unknown kind in a filter); it becomes
# chronica.InvalidQuery once the services raise that.
BAD_INPUT: tuple[type[Exception], ...] = (InvalidActum, EmptyOwnerID, ValueError)


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
    """Turn the errors of a ``chronica.services`` call into HTTP answers."""
    try:
        yield
    except ChronicumNotFound:
        # Neither the ID nor which of the two cases it was: someone else's
        # chronicum must look exactly like one that never existed.
        raise NotFound() from None
    except IdempotencyUnsupported:
        raise IdempotencyNotImplemented() from None
    except BAD_INPUT as exc:
        raise BadRequest(str(exc)) from None
