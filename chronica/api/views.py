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
from typing import Any, NamedTuple, cast

from django.db import connections
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.authentication import BaseAuthentication
from rest_framework.decorators import action
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.permissions import AllowAny, BasePermission, IsAuthenticated
from rest_framework.renderers import BaseRenderer, BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.utils import formatting
from rest_framework.viewsets import ViewSet

from .. import services
from ..conf import chronica_settings
from ..validation.parameters import WINDOW_PARAMETERS
from . import schema
from .agents import AgentCredentialThrottle, chronicarius_for
from .authentication import AgentCredentialAuthentication, sent_agent_credential
from .compaction import FORK, POST_COMPACTION, CompactionMixin
from .errors import BadRequest, api_exception
from .inputs import (
    IDEMPOTENCY_KEY,
    acta_from_body,
    arguments,
    check_length,
    check_path,
    check_query,
    idempotency_key,
    listing_limit,
    names,
    new_chronicum_id,
    owner_id,
)
from .paging import cursor_for, link_to, position_of
from .parsers import StrictJSONParser
from .pop import PopMixin
from .renderers import (
    ChronicaBrowsableAPIRenderer,
    JSONArray,
    RawBrowsableAPIRenderer,
    RawJSONRenderer,
    answer_indent,
    raw_renderer,
    takes_raw,
)
from .serializers import ChronicumSerializer
from .state import StateMixin
from .stream import STREAM, ActaStreamMixin
from .wire import acta_wire, actum_wire

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
        check_path(request)
        check_query(request, self.query_parameters.get(self.action or "", frozenset()))
        check_length(request)

    def handle_exception(self, exc: Exception) -> Response:
        # chronica's errors and the database's, mapped here once for every action.
        request = self.request
        keyed = request is not None and IDEMPOTENCY_KEY in request.headers
        method = "" if request is None else request.method or ""
        return super().handle_exception(api_exception(exc, method, keyed))

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)
        # The answer may take a while to go out (a slow client, a stream): the request's
        # database connections go back now, as Django gives them back at its end
        # (CONN_MAX_AGE permitting), not after the last byte. A queue of requests
        # (chronica.api.asgi.RequestQueue) then bounds the connections a worker holds.
        for connection in connections.all(initialized_only=True):
            if not connection.in_atomic_block:
                connection.close_if_unusable_or_obsolete()
        return response

    def get_renderers(self) -> list[BaseRenderer]:
        # DRF's browsable API as the project names it, with one breadcrumb a route.
        return [
            ChronicaBrowsableAPIRenderer() if type(r) is BrowsableAPIRenderer else r
            for r in super().get_renderers()
        ]

    #: What the browsable API and OPTIONS say of each action: its OpenAPI description
    #: (Markdown), not its docstring (Python's reStructuredText).
    descriptions: dict[str, dict[str, Any]] = {}

    def get_view_description(self, html: bool = False) -> str:
        action: str | None = self.action
        if action in (None, "metadata"):  # OPTIONS: the route's, as its GET describes it
            action = (getattr(self, "action_map", None) or {}).get("get")
        described = self.descriptions.get(action or "")
        if described is None:
            return str(super().get_view_description(html))
        text = str(described["description"])
        if not html:
            return text
        if getattr(formatting, "apply_markdown", None) is None:
            text = text.replace("`", "")  # no Markdown to render it: plain text
        return str(formatting.markup_description(text))

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
        # Only a request made with an agent's credential is counted (the throttle's
        # cache key is None for any other): one instance a request, which reads its
        # rate when it is made.
        if isinstance(getattr(self.request, "auth", None), services.AgentIdentity):
            agent = AgentCredentialThrottle()
            if agent.rate is not None:
                throttles.append(agent)
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


class ChronicumViewSet(ActaStreamMixin, PopMixin, StateMixin, CompactionMixin, BaseViewSet):
    """The caller's chronica, and the acta of each."""

    lookup_field = "chronicum_id"
    # Any ID but one with a slash, dots included (DRF's default refuses dots).
    lookup_value_regex = "[^/]+"
    lookup_value_converter = "str"
    query_parameters = {"list": frozenset({"limit", "cursor"}), "acta": names(WINDOW_PARAMETERS)}
    descriptions = {
        "list": schema.LIST_CHRONICA,
        "create": schema.CREATE_CHRONICUM,
        "retrieve": schema.GET_CHRONICUM,
        "destroy": schema.DELETE_CHRONICUM,
        "acta": schema.GET_ACTA,
        "record": schema.POST_ACTA,
        "stream": STREAM,
        "pop": schema.POP_ACTUM,
        "state": schema.GET_STATE,
        "change_state": schema.CHANGE_STATE,
        "fork": FORK,
        "compactions": POST_COMPACTION,
    }

    @extend_schema(**schema.LIST_CHRONICA)
    def list(self, request: Request) -> Response:
        """The caller's chronica, latest activity first, a page at a time."""
        owner, limit = owner_id(request), listing_limit(request)
        cursor = request.query_params.get("cursor")
        after = None if cursor is None else position_of(cursor, owner)
        page = chronicarius_for(request, owner).list_chronica_page(owner, limit=limit, before=after)
        last = page.last
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
        chronicum = chronicarius_for(request, owner).get_chronicum(owner, chronicum_id)
        return Response(ChronicumSerializer(chronicum).data)

    @extend_schema(**schema.DELETE_CHRONICUM)
    def destroy(self, request: Request, chronicum_id: str) -> Response:
        """Delete the chronicum and all its acta, if it is the caller's."""
        owner = owner_id(request)
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
        page = chronicarius_for(request, owner).get_acta_page(
            owner, chronicum_id, **window, max_bytes=budget, raw_data=raw
        )
        before = page.next_before
        acta = acta_wire(page.acta)
        # The budget counts the bytes of the answer as it is sent: this representation,
        # its indent included.
        array = JSONArray(acta, answer_indent(request)) if raw else _measured(self, request, acta)
        # Mostly the whole array fits, which its size says at once.
        fits = isinstance(array, JSONArray) and array.size <= budget
        oldest = 0 if fits else _oldest_within(array, budget)
        if oldest:
            before = page.acta[oldest].id
        body: Any = acta[oldest:]
        if raw:
            renderer = raw_renderer(request)
            if isinstance(renderer, RawJSONRenderer) and isinstance(array, JSONArray):
                body = array.text(oldest)
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
        recorded = chronicarius_for(request, owner).record_acta(owner, acta, idempotency_key=key)
        # The answer has the request's shape: a replay of a batch by one object
        # gives its first actum, as services.record_actum does.
        if isinstance(request.data, list):
            body: Any = acta_wire(recorded)
        else:
            body = actum_wire(recorded[0])
        if recorded.replayed:
            return Response(body, status=status.HTTP_200_OK, headers={REPLAYED: "true"})
        if not recorded:
            # An empty batch: nothing is written, not even the chronicum.
            return Response(body, status=status.HTTP_200_OK)
        return Response(body, status=status.HTTP_201_CREATED)


def _measured(view: ViewSet, request: Request, acta: list[dict[str, Any]]) -> Measured:
    """The bytes ``acta`` take in the answer of a renderer of the project's own, as
    that renderer writes them, each actum rendered alone (the browsable API: as the
    renderer it shows)."""
    renderer: BaseRenderer = request.accepted_renderer
    context = view.get_renderer_context()
    media_type = request.accepted_media_type
    if isinstance(renderer, BrowsableAPIRenderer):
        renderer = renderer.get_default_renderer(view) or JSONRenderer()
        context = {**context, "indent": RawBrowsableAPIRenderer.indent}
        media_type = renderer.media_type

    def size(items: list[dict[str, Any]]) -> int:
        return len(renderer.render(items, media_type, context))

    empty = size([])
    sizes = [size([actum]) - empty for actum in acta]
    # What an array of two adds to its two items: what comes between items.
    separator = size(acta[:2]) - sizes[0] - sizes[1] - empty if len(acta) > 1 else 0
    return Measured(sizes, empty, separator)


class Measured(NamedTuple):
    """What a JSON array of acta takes: each actum, the brackets, and a separator
    before every actum but the first (:class:`~chronica.api.renderers.JSONArray` is one)."""

    sizes: list[int]
    brackets: int
    separator: int


def _oldest_within(array: JSONArray | Measured, budget: int) -> int:
    """The position of the oldest actum of the answer: the newest acta whose array,
    brackets and separators included, is at most ``budget`` bytes (the newest always).
    The store cut the page by the bytes of content and data; this counts every byte
    sent, the other fields, the escapes and the indentation included."""
    sizes = array.sizes
    used, oldest = array.brackets, len(sizes)
    while oldest > 0:
        size = sizes[oldest - 1] + (array.separator if oldest < len(sizes) else 0)
        if used + size > budget and oldest < len(sizes):
            break
        used += size
        oldest -= 1
    return oldest
