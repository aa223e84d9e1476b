"""``GET /api/search/?q=...``: the caller's acta across all their chronica that match a
query, best first, a page at a time (``services.search_acta``)."""

from __future__ import annotations

import json
from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from ..conf import chronica_settings
from ..search import MAX_QUERY_LENGTH
from ..validation.parameters import PARAMETERS
from ..values import SearchHit
from .agents import chronicarius_for
from .errors import BadRequest
from .inputs import integer, listed, owner_id
from .paging import link_to
from .schema import _COMMON_NO_404, _INVALID, _NEXT, _STORE_CANNOT, RETRY_AFTER, query_parameters
from .serializers import ActumSerializer
from .views import BaseViewSet
from .wire import acta_wire

__all__ = ["SearchHitSerializer", "SearchViewSet"]

DEFAULT_SEARCH_LIMIT = 20
MAX_SEARCH_PAGE = 100
MAX_SEARCH_OFFSET = 899


class SearchHitSerializer(serializers.Serializer[Any]):
    """One actum a search found, its rank and a snippet of its text."""

    actum = ActumSerializer(read_only=True)
    rank = serializers.FloatField(read_only=True, help_text="Higher is better, within one search.")
    snippet = serializers.CharField(
        read_only=True,
        help_text="A short excerpt of the actum's text, each matching word between « and ».",
    )


def hits_wire(hits: list[SearchHit]) -> list[dict[str, Any]]:
    return [
        {"actum": actum, "rank": hit.rank, "snippet": hit.snippet}
        for hit, actum in zip(hits, acta_wire(hit.actum for hit in hits), strict=True)
    ]


def _within(hits: list[dict[str, Any]], budget: int) -> int:
    """How many of ``hits`` (the first always) fit in ``budget`` bytes of compact JSON."""
    used = 2
    for count, hit in enumerate(hits):
        size = len(json.dumps(hit, ensure_ascii=False, separators=(",", ":")).encode()) + 1
        if count and used + size > budget:
            return count
        used += size
    return len(hits)


SEARCH: dict[str, Any] = {
    "operation_id": "chronica_search",
    "summary": "Search the caller's acta across all their chronica, best first",
    "description": "The caller's acta, in any of their chronica (with an agent's credential:"
    ' only those it names), that match `q`: words (all must match), `"quoted phrases"`,'
    " `or` between alternatives and `-word` to leave out; nothing else is syntax. An actum's"
    " text is its content and the strings inside its `data`. Best rank first, ties newest"
    ' first; `limit` a page (1 to 100, default 20), cut early at `CHRONICA["API_MAX_RESPONSE'
    '_BYTES"]`; a `Link` header names the next page while more may match. An empty query,'
    " or one with no word to find, is a 400.",
    "parameters": [
        OpenApiParameter(
            "q",
            {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_LENGTH},
            required=True,
            description="What to find.",
        ),
        OpenApiParameter(
            "chronicum",
            {"type": "array", "items": {"type": "string"}},
            explode=True,
            description="Only in these chronica (IDs; repeat, or separate by commas).",
        ),
        *query_parameters(p for p in PARAMETERS if p.repeatable),
        OpenApiParameter(
            "limit",
            {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_PAGE},
            description=f"Hits a page, 1 to {MAX_SEARCH_PAGE}. Absent: {DEFAULT_SEARCH_LIMIT}.",
        ),
        OpenApiParameter(
            "offset",
            {"type": "integer", "minimum": 0, "maximum": MAX_SEARCH_OFFSET},
            description="Hits skipped: as the `Link` of the previous page sets it.",
        ),
        _NEXT,
        RETRY_AFTER,
    ],
    "responses": {
        200: SearchHitSerializer(many=True),
        400: _INVALID,
        **_COMMON_NO_404,
        501: _STORE_CANNOT,
    },
}


class SearchViewSet(BaseViewSet):
    """Search over the caller's chronica."""

    query_parameters = {
        "list": frozenset({"q", "chronicum", "kind", "actor_kind", "actor", "limit", "offset"})
    }
    descriptions = {"list": SEARCH}

    @extend_schema(**SEARCH)
    def list(self, request: Request) -> Response:
        """The caller's acta that match ``q``, best first; a ``Link`` to the next page."""
        owner = owner_id(request)
        query = request.query_params.get("q", "")
        limit = integer(request, "limit")
        limit = DEFAULT_SEARCH_LIMIT if limit is None else limit
        offset = integer(request, "offset") or 0
        if not 1 <= limit <= MAX_SEARCH_PAGE:
            raise BadRequest(f"limit must be from 1 to {MAX_SEARCH_PAGE}, not {limit}")
        if not 0 <= offset <= MAX_SEARCH_OFFSET:
            raise BadRequest(f"offset must be from 0 to {MAX_SEARCH_OFFSET}, not {offset}")
        chronica = listed(request, "chronicum") if "chronicum" in request.query_params else None
        try:
            hits = chronicarius_for(request, owner).search_acta(
                owner,
                query,
                chronica=chronica,
                kinds=listed(request, "kind"),
                actor_kinds=listed(request, "actor_kind"),
                actors=listed(request, "actor"),
                # one more: whether a next page exists
                limit=limit + 1,
                offset=offset,
            )
        except ValueError as exc:
            raise BadRequest(f"q: {exc}") from None
        more = len(hits) > limit
        body = hits_wire(hits[:limit])
        fit = _within(body, chronica_settings.API_MAX_RESPONSE_BYTES)
        more = more or fit < len(body)
        body = body[:fit]
        headers = {}
        if more and offset + fit <= MAX_SEARCH_OFFSET:
            headers["Link"] = f'<{link_to(request, offset=str(offset + fit))}>; rel="next"'
        return Response(body, headers=headers)
