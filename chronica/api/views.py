"""The HTTP face of ``chronica.services``: the caller's chronica (list, start, read,
delete), the context window of each, a page at a time, and its writes.

``ChronicumViewSet`` turns HTTP into the arguments of ``chronica.services`` and
its errors back into HTTP; every rule stays in the services. The owner is
always ``request.user`` passed through ``CHRONICA["OWNER_ID"]``.

Register it on a project's own DRF router next to the project's endpoints::

    router.register("chronica", ChronicumViewSet, basename="chronicum")
    urlpatterns = [path("v1/", include(optional_slash(router.urls)))]

or include ``chronica.api.urls``, which does exactly that under ``api/``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, cast

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.authentication import BaseAuthentication
from rest_framework.decorators import action
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.permissions import AllowAny, BasePermission, IsAuthenticated
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.viewsets import ViewSet

from .. import services
from ..conf import chronica_settings
from ..validation import WINDOW_PARAMETERS, RawJSON, raw_data
from . import schema
from .agents import (
    AgentCredentialAuthentication,
    AgentCredentialThrottle,
    chronicarius_for,
    sent_agent_credential,
)
from .errors import (
    BadRequest,
    PayloadTooLarge,
    chronica_errors,
    database_failure,
    unreachable_database,
)
from .inputs import (
    IDEMPOTENCY_KEY,
    acta_from_body,
    arguments,
    check_length,
    check_query,
    idempotency_key,
    listing_limit,
    names,
    new_chronicum_id,
    owner_id,
)
from .paging import cursor_for, link_to, position_of
from .parsers import StrictJSONParser
from .renderers import RawJSONRenderer, dumps, raw_renderer, takes_raw
from .serializers import ActumSerializer, ChronicumSerializer
from .stream import ActaStreamMixin

__all__ = ["BaseViewSet", "ChronicumViewSet"]

REPLAYED = "Idempotent-Replayed"


class FormatNegotiation(DefaultContentNegotiation):
    """DRF's content negotiation, except that a ``?format=`` no renderer of the route
    has is a 400 naming those it has, like any other bad query parameter (DRF answers
    404, which reads as "no such chronicum" and is not in the schema)."""

    def filter_renderers(
        self, renderers: Iterable[BaseRenderer], format: str
    ) -> list[BaseRenderer]:
        found = [renderer for renderer in renderers if renderer.format == format]
        if not found:
            known = ", ".join(dict.fromkeys(renderer.format for renderer in renderers))
            raise BadRequest(f"format={format!r} is not one of: {known}")
        return found


class BaseViewSet(ViewSet):
    """What every chronica viewset is: JSON in; the project's authentication; signed
    in, at least; no query parameter the action does not take.

    The project's ``REST_FRAMEWORK`` authentication and permission classes are
    read on each request (not once, when DRF was imported), so that changing
    them, ``override_settings`` included, takes effect.
    """

    parser_classes = [StrictJSONParser]
    content_negotiation_class = FormatNegotiation
    #: The query parameters each action takes; any other is a 400.
    query_parameters: dict[str, frozenset[str]] = {}

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        check_query(request, self.query_parameters.get(self.action or "", frozenset()))
        check_length(request)

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, RequestDataTooBig):
            # Django would answer an HTML 400 page; this names the setting to raise.
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            exc = PayloadTooLarge(
                f"the request body is larger than DATA_UPLOAD_MAX_MEMORY_SIZE ({limit} bytes)"
            )
        request = self.request
        keyed = request is not None and IDEMPOTENCY_KEY in request.headers
        method = "" if request is None else request.method or ""
        exc = unreachable_database(exc) or database_failure(exc, method, keyed) or exc
        return super().handle_exception(exc)

    def get_authenticators(self) -> list[BaseAuthentication]:
        classes = cast(
            Sequence[type[BaseAuthentication]], api_settings.DEFAULT_AUTHENTICATION_CLASSES
        )
        # An agent's credential first: a Bearer token of chronica's is never handed
        # to another class (which would answer a confusing 401 of its own).
        classes = [AgentCredentialAuthentication, *classes]
        return [authentication() for authentication in dict.fromkeys(classes)]

    def get_throttles(self) -> list[Any]:
        throttles = list(super().get_throttles())
        if AgentCredentialThrottle().get_rate() is not None:
            throttles.append(AgentCredentialThrottle())
        return throttles

    def get_authenticate_header(self, request: Request) -> str:
        # DRF asks only the first class, so with its default (session first) a
        # client never learns that Basic or Token would do. Every challenge the
        # project's classes can make is a 401 with all of them; none is a 403.
        # The agent's Bearer challenge only to a request that sent an agent's
        # credential: for every other request the project's classes decide.
        authenticators = [
            a
            for a in self.get_authenticators()
            if not isinstance(a, AgentCredentialAuthentication) or sent_agent_credential(request)
        ]
        challenges = (a.authenticate_header(request) for a in authenticators)
        return ", ".join(dict.fromkeys(c for c in challenges if c))

    def get_permissions(self) -> Sequence[BasePermission]:
        # Never below signed in, whatever the project allows: an anonymous user
        # has no owner ID.
        policy = cast(Sequence[type[BasePermission]], api_settings.DEFAULT_PERMISSION_CLASSES)
        return [IsAuthenticated(), *(p() for p in policy if p is not AllowAny)]


class ChronicumViewSet(ActaStreamMixin, BaseViewSet):
    """The caller's chronica, and the acta of each."""

    lookup_field = "chronicum_id"
    # Any ID but one with a slash, dots included (DRF's default refuses dots).
    lookup_value_regex = "[^/]+"
    lookup_value_converter = "str"
    query_parameters = {"list": frozenset({"limit", "cursor"}), "acta": names(WINDOW_PARAMETERS)}

    @extend_schema(**schema.LIST_CHRONICA)
    def list(self, request: Request) -> Response:
        """The caller's chronica, latest activity first, a page at a time."""
        owner, limit = owner_id(request), listing_limit(request)
        cursor = request.query_params.get("cursor")
        after = None if cursor is None else position_of(cursor, owner)
        with chronica_errors():
            page = chronicarius_for(request, owner).list_chronica_page(
                owner, limit=limit, before=after
            )
        last = page.next_before
        return Response(
            {
                "results": ChronicumSerializer(page.chronica, many=True).data,
                "next": None if last is None else link_to(request, cursor=cursor_for(last)),
            }
        )

    @extend_schema(**schema.CREATE_CHRONICUM)
    def create(self, request: Request) -> Response:
        """A new, empty chronicum: with the ID the body names, or a new unguessable one."""
        chronicum_id, owner = new_chronicum_id(request.data), owner_id(request)
        with chronica_errors():
            chronicum = chronicarius_for(request, owner).create_chronicum(owner, chronicum_id)
        location = self.reverse_action("detail", args=[chronicum.id])
        return Response(
            ChronicumSerializer(chronicum).data,
            status=status.HTTP_201_CREATED,
            headers={"Location": location},
        )

    @extend_schema(**schema.GET_CHRONICUM)
    def retrieve(self, request: Request, chronicum_id: str) -> Response:
        """The chronicum, if it is the caller's."""
        owner = owner_id(request)
        with chronica_errors():
            chronicum = chronicarius_for(request, owner).get_chronicum(owner, chronicum_id)
        return Response(ChronicumSerializer(chronicum).data)

    @extend_schema(**schema.DELETE_CHRONICUM)
    def destroy(self, request: Request, chronicum_id: str) -> Response:
        """Delete the chronicum and all its acta, if it is the caller's."""
        owner = owner_id(request)
        with chronica_errors():
            chronicarius_for(request, owner).delete_chronicum(owner, chronicum_id)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(**schema.GET_ACTA)
    @action(detail=True, methods=["get"], url_path="acta", url_name="acta")
    def acta(self, request: Request, chronicum_id: str) -> Response:
        """The context window: filtered, then the newest that fit
        ``last_n``, ``max_tokens`` and ``CHRONICA["API_MAX_ACTA"]``, oldest first; a
        ``Link`` header to the older page when there is one."""
        owner, window = owner_id(request), arguments(request, WINDOW_PARAMETERS)
        # last_n is the page size, never over the most one answer holds.
        most, last_n = chronica_settings.API_MAX_ACTA, window.get("last_n", 0)
        window["last_n"] = min(last_n, most) if last_n > 0 else most
        budget = chronica_settings.API_MAX_RESPONSE_BYTES
        # DRF's own JSON answer takes each actum's data as stored, never decoded.
        raw = takes_raw(request)
        reset = raw_data.set(raw)
        try:
            with chronica_errors():
                page = chronicarius_for(request, owner).get_acta_page(
                    owner, chronicum_id, **window, max_bytes=budget
                )
        finally:
            raw_data.reset(reset)
        before = page.next_before
        acta = cast(list[dict[str, Any]], ActumSerializer(page.acta, many=True).data)
        # The same page in every representation: the budget counts the JSON answer's bytes.
        text, oldest = _within_budget(acta, budget)
        if oldest:
            before = page.acta[oldest].id
        body: Any = acta[oldest:]
        if raw:
            renderer = raw_renderer(request)
            body = text if isinstance(renderer, RawJSONRenderer) else body
            request.accepted_renderer = renderer
        headers = (
            {} if before is None else {"Link": f'<{link_to(request, before=before)}>; rel="next"'}
        )
        return Response(body, headers=headers)

    @extend_schema(**schema.POST_ACTA)
    @acta.mapping.post
    def record(self, request: Request, chronicum_id: str) -> Response:
        """Record one actum (a JSON object) or a batch (an array); a retry with the same
        Idempotency-Key returns what the first stored."""
        agent = isinstance(request.auth, services.AgentIdentity)
        acta = acta_from_body(chronicum_id, request.data, agent=agent)
        owner, key = owner_id(request), idempotency_key(request)
        with chronica_errors():
            recorded = chronicarius_for(request, owner).record(owner, acta, idempotency_key=key)
        # The answer has the request's shape: a replay of a batch by one object
        # gives its first actum, as services.record_actum does.
        if isinstance(request.data, list):
            body = ActumSerializer(recorded.acta, many=True).data
        else:
            body = ActumSerializer(recorded.acta[0]).data
        if recorded.replayed:
            return Response(body, status=status.HTTP_200_OK, headers={REPLAYED: "true"})
        if not recorded.acta:
            # An empty batch: nothing is written, not even the chronicum.
            return Response(body, status=status.HTTP_200_OK)
        return Response(body, status=status.HTTP_201_CREATED)


def _within_budget(acta: list[dict[str, Any]], budget: int) -> tuple[RawJSON, int]:
    """The window's JSON array, and the position of its oldest actum in it: the newest
    acta whose rendered JSON, commas and brackets included, is at most ``budget`` bytes
    (the newest always). The store cut the page by the bytes of content and data; this
    counts every byte sent, the other fields and the escapes included."""
    texts = [dumps(actum) for actum in acta]
    used, oldest = 2, len(texts)
    while oldest > 0:
        text = texts[oldest - 1]
        size = (len(text) if text.isascii() else len(text.encode())) + 1
        if used + size > budget + 1 and oldest < len(texts):
            break
        used += size
        oldest -= 1
    return RawJSON("[" + ",".join(texts[oldest:]) + "]"), oldest
