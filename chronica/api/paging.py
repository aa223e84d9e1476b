"""Pages of the chronica listing and of a context window, and the links between them.

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
from typing import Any

from django.utils.encoding import escape_uri_path
from rest_framework.request import Request

from .. import services
from ..validation import MAX_LIST_LIMIT, check_listing, storable
from ..values import Actum, Chronicum
from ..windows import keep_whole_tool_calls
from .errors import BadRequest
from .inputs import WindowQuery

__all__ = ["chronica_page", "cursor_for", "link_to", "position_of", "window_page"]


def chronica_page(owner: str, limit: int, after: Chronicum | None) -> tuple[list[Chronicum], bool]:
    """A page of the owner's chronica after ``after``, and whether more follow it."""
    limit, _ = check_listing(limit, after)
    # One more than the page tells whether another page follows, in the same
    # query; at the largest page size the services take, a second query asks.
    fetched = services.list_chronica(owner, limit=min(limit + 1, MAX_LIST_LIMIT), before=after)
    if len(fetched) > limit:
        return fetched[:limit], True
    if len(fetched) == limit:
        return fetched, bool(services.list_chronica(owner, limit=1, before=fetched[-1]))
    return fetched, False


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


def window_page(
    owner: str, chronicum_id: str, query: WindowQuery, most: int
) -> tuple[list[Actum], str | None]:
    """The window of ``query``, at most ``most`` acta, and the ``before`` of the next
    (older) page, or ``None`` when no older actum passes the filters.

    ``last_n`` is the page size (never over ``most``). The page is cut as
    ``services.get_acta`` cuts a window; ``whole_tool_calls`` then leaves out the
    tool responses whose tool request is not on this page, so each page covers a
    stretch of the session that the next page continues, whatever was left out.
    A page cut empty by ``max_tokens`` (its newest actum alone is over the
    budget) has no next page: the budget ends the walk there, as it ends a window.
    """
    size = min(query["last_n"], most) if query["last_n"] > 0 else most
    filters: dict[str, Any] = {"kinds": query["kinds"], "actor_kinds": query["actor_kinds"]}
    # One more than the page: if it comes, an older page exists, in the same query.
    cut = services.get_acta(
        owner,
        chronicum_id,
        **filters,
        last_n=size + 1,
        max_tokens=query["max_tokens"],
        before=query["before"],
    )
    if len(cut) > size:
        cut, more = cut[1:], True
    elif cut and query["max_tokens"] is not None:
        # The budget may have cut the page short: is there an older actum?
        more = bool(services.get_acta(owner, chronicum_id, **filters, last_n=1, before=cut[0].id))
    else:
        more = False
    page = keep_whole_tool_calls(cut) if query["whole_tool_calls"] else cut
    return page, cut[0].id if more else None


def link_to(request: Request, **changes: str) -> str:
    """The absolute URL of this request with ``changes`` made to its query."""
    query = request.query_params.copy()
    for name, value in changes.items():
        query[name] = value
    return request.build_absolute_uri(f"{escape_uri_path(request.path)}?{query.urlencode()}")
