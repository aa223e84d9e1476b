"""The links between the pages that ``chronica.services`` reads (``list_chronica_page``,
``get_acta_page``).

The listing pages forward with ``next`` in the body, an opaque cursor that
holds the last chronicum's place in the order (its ``last_activity_at`` and
its ID), so that a page starts where the previous one ended even when chronica
were written or deleted between the two requests. A window pages backwards
with an RFC 8288 ``Link: <...>; rel="next"`` header that asks for the same
window ``before`` the oldest actum of the page.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
from urllib.parse import urlencode

from django.utils.encoding import escape_uri_path
from rest_framework.request import Request

from ..validation.identifiers import storable
from ..values import Chronicum
from .errors import BadRequest

__all__ = ["cursor_for", "link_to", "position_of"]


def cursor_for(chronicum: Chronicum) -> str:
    """The cursor of the page that starts after ``chronicum``."""
    place = [chronicum.last_activity_at.isoformat(), chronicum.id]
    raw = json.dumps(place, separators=(",", ":"), ensure_ascii=False).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def position_of(cursor: str, owner: str) -> Chronicum:
    """The place a cursor of :func:`cursor_for` holds, as the ``before`` of
    ``services.list_chronica``; a 400 for anything else."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        at, chronicum_id = json.loads(raw)
        if not isinstance(at, str) or not isinstance(chronicum_id, str):
            raise ValueError("not a place")
        if not storable(chronicum_id):
            raise ValueError("no chronicum has that ID")
        last_activity_at = dt.datetime.fromisoformat(at)
        if last_activity_at.tzinfo is None:
            raise ValueError("not an aware time")
        last_activity_at = last_activity_at.astimezone(dt.UTC)
    except (binascii.Error, ValueError, TypeError, OverflowError):
        # json's errors and UnicodeDecodeError are ValueErrors too.
        raise BadRequest("cursor is not one this API gave: use the next URL as it is") from None
    return Chronicum(chronicum_id, owner, last_activity_at, last_activity_at)


def link_to(request: Request, **changes: str) -> str:
    """The absolute URL of this request with ``changes`` made to its query (each
    changed parameter in its place, a new one last), encoded as ``QueryDict.urlencode``
    encodes it."""
    params = request.query_params
    query = dict(params.lists())
    for name, value in changes.items():
        query[name] = [value]
    encoded = urlencode(query, doseq=True, encoding=params.encoding or "utf-8")
    return request.build_absolute_uri(f"{escape_uri_path(request.path)}?{encoded}")
