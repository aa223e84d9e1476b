"""The acta admin: every actum, read-only, cut to what a page can carry, and the
whole of one streamed by a view of its own."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.contrib import admin
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import PermissionDenied
from django.db import connections
from django.db.models import Q, QuerySet, TextField
from django.db.models.expressions import RawSQL
from django.db.models.functions import Cast, Substr
from django.http import Http404, HttpRequest, StreamingHttpResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from .. import models
from .base import ReadOnlyAdmin
from .display import RAW_CHUNK_CHARS, Shown, bounded_acta, preview, raw_url, shown
from .filters import CallIdFilter, ChronicumFilter, acta_changelist_url
from .redaction import redact

__all__ = ["ActumAdmin"]

_RAW_FIELDS = {"content": "text/plain; charset=utf-8", "data": "application/json"}


@admin.register(models.Actum)
class ActumAdmin(ReadOnlyAdmin):
    list_display = (
        "seq",
        "chronicum_link",
        "kind",
        "actor_kind",
        "actor",
        "recorded_by",
        "call",
        "short_content",
        "at",
    )
    actions = [redact]
    list_display_links = ("seq",)
    ordering = ("-seq",)  # the newest acta first; a transcript reads in write order
    list_filter = ("kind", "actor_kind", ChronicumFilter, CallIdFilter)
    search_fields = ("content", "actor")
    search_help_text = (
        'Words (all must match), "a phrase", or, -word, in content and data; or an actor ID.'
    )
    readonly_fields = ("call", "shown_content", "shown_data")
    fields = (
        "seq",
        "id",
        "chronicum",
        "kind",
        "actor_kind",
        "actor",
        "recorded_by",
        "call",
        "at",
        "idempotency_key",
        "tokens",
        "shown_content",
        "shown_data",
        "redacted_at",
        "redacted_reason",
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[models.Actum]:
        return bounded_acta(super().get_queryset(request))

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[models.Actum], search_term: str
    ) -> tuple[QuerySet[models.Actum], bool]:
        """Search's index (``chronica.search``: the query language of ``search_acta``,
        over content and the strings inside data, every owner's), or an actor ID; where
        the database has no search, Django's own search of content and actor."""
        from ..stores.db.dialects import matching

        found = matching(connections[queryset.db], search_term) if search_term.strip() else None
        if found is None:
            return super().get_search_results(request, queryset, search_term)
        text, params = found
        return queryset.filter(
            Q(seq__in=RawSQL(text, params)) | Q(actor=search_term.strip())
        ), False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # An actum goes only with its whole chronicum.
        return False

    def has_redact_permission(self, request: HttpRequest) -> bool:
        # Redaction is the one change an actum sees: for those who may change acta.
        return bool(request.user.has_perm("chronica.change_actum"))

    def get_urls(self) -> list[URLPattern]:
        raw = path(
            "<path:object_id>/raw/<str:field>/",
            self.admin_site.admin_view(self.raw_view),
            name="chronica_actum_raw",
        )
        return [raw, *super().get_urls()]

    def raw_view(self, request: HttpRequest, object_id: str, field: str) -> StreamingHttpResponse:
        """The whole content (``text/plain``) or data (JSON, as the database keeps it)
        of one actum, streamed from the database a chunk at a time.

        Without the view permission the answer is 403 before anything is looked up,
        so that it is the same for an actum that exists and one that does not."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        if field not in _RAW_FIELDS:
            raise Http404("no such field")
        actum = self.get_object(request, unquote(object_id))
        if actum is None or not self.has_view_permission(request, actum):
            # Denied for this one actum only (an object permission): as if missing.
            raise Http404("no such actum")
        response = StreamingHttpResponse(_chunks(actum.seq, field), content_type=_RAW_FIELDS[field])
        extension = "txt" if field == "content" else "json"
        response["Content-Disposition"] = (
            f'inline; filename="actum-{actum.seq}-{field}.{extension}"'
        )
        # What an agent wrote is shown as text, never run as a page of the admin.
        response["X-Content-Type-Options"] = "nosniff"
        response["Content-Security-Policy"] = "default-src 'none'; sandbox"
        return response

    @admin.display(description="chronicum", ordering="chronicum_id")
    def chronicum_link(self, obj: models.Actum) -> str:
        url = reverse(
            f"{self.admin_site.name}:chronica_chronicum_change", args=[quote(obj.chronicum_id)]
        )
        return format_html('<a href="{}">{}</a>', url, obj.chronicum_id)

    @admin.display(description="call ID", ordering="call_id")
    def call(self, obj: models.Actum) -> str:
        """The call ID, linked to every actum of that tool call in the chronicum."""
        if not obj.call_id:
            return ""
        url = acta_changelist_url(self.admin_site, obj.chronicum_id, obj.call_id)
        return format_html('<a href="{}">{}</a>', url, obj.call_id)

    @admin.display(description="content")
    def short_content(self, obj: models.Actum) -> str:
        return preview(obj.content_head)  # type: ignore[attr-defined]

    @admin.display(description="content")
    def shown_content(self, obj: models.Actum) -> SafeString:
        tool = obj.kind in ("tool_request", "tool_response")
        text = shown(obj.content_head, obj.content_length, pretty=tool)  # type: ignore[attr-defined]
        return self._shown(obj, text, "content")

    @admin.display(description="data")
    def shown_data(self, obj: models.Actum) -> SafeString:
        text = shown(obj.data_head, obj.data_length, pretty=True)  # type: ignore[attr-defined]
        return self._shown(obj, text, "data")

    def _shown(self, obj: models.Actum, text: Shown | None, field: str) -> SafeString:
        if text is None:
            return format_html("{}", "-")
        pre = format_html('<pre class="chronica-content chronica-json">{}</pre>', text.text)
        if not text.cut:
            return pre
        return format_html(
            '{}<p class="chronica-cut">Cut: {} characters in all. <a href="{}">Show all</a></p>',
            pre,
            text.length_display,
            raw_url(self.admin_site, obj.seq, field),
        )


def _chunks(seq: int, field: str) -> Iterator[str]:
    """The text of one column of one actum, ``RAW_CHUNK_CHARS`` characters a query."""
    column: Any = Cast("data", TextField()) if field == "data" else "content"
    start = 1
    while True:
        piece = (
            models.Actum.objects.filter(seq=seq)
            .annotate(piece=Substr(column, start, RAW_CHUNK_CHARS))
            .values_list("piece", flat=True)
            .first()
        )
        if not piece:
            return  # the end, or the actum went with its chronicum meanwhile
        yield piece
        if len(piece) < RAW_CHUNK_CHARS:
            return
        start += RAW_CHUNK_CHARS
