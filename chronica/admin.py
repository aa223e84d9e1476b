"""Browse and inspect chronica in the Django admin, read-only.

A chronicum is an append-only record: nobody adds or changes a chronicum or an
actum here. A whole chronicum, with its acta, may be deleted by a user holding
its delete permission (an erasure request); a single actum never is.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.contrib.admin.utils import quote
from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import format_html

from . import models
from .errors import ChronicumNotFound
from .services import get_chronicarius
from .values import ActaQuery, Actum

TRANSCRIPT_LIMIT = 200
"""The change page of a chronicum shows at most this many of its most recent acta."""

FOLD_CHARS = 600
FOLD_LINES = 16
PREVIEW_CHARS = 160


@dataclasses.dataclass(frozen=True)
class TranscriptLine:
    """One actum as the transcript template shows it."""

    position: int
    kind: str
    actor_kind: str
    actor: str
    at: dt.datetime | None
    content: str
    is_json: bool
    folded: bool
    preview: str


def transcript_line(position: int, actum: Actum) -> TranscriptLine:
    """Pretty-print the JSON of a tool actum and fold long content behind a preview."""
    content, is_json = actum.content, False
    if actum.kind in ("tool_request", "tool_response") and content.strip():
        try:
            content = json.dumps(json.loads(content), indent=2, ensure_ascii=False)
            is_json = True
        except ValueError:
            pass
    folded = len(content) > FOLD_CHARS or content.count("\n") >= FOLD_LINES
    preview = " ".join(actum.content.split())
    if len(preview) > PREVIEW_CHARS:
        preview = preview[:PREVIEW_CHARS].rstrip() + "…"
    return TranscriptLine(
        position=position,
        kind=str(actum.kind),
        actor_kind=str(actum.actor_kind),
        actor=actum.actor,
        at=actum.at,
        content=content,
        is_json=is_json,
        folded=folded,
        preview=preview,
    )


class ReadOnlyAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """No add and no change, every field read-only (the view permission shows a page)."""

    show_full_result_count = False  # a second COUNT(*) over a huge table buys nothing

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        model_fields = [f.name for f in self.model._meta.concrete_fields]
        return [*model_fields, *self.readonly_fields]


def acta_changelist_url(admin_site: admin.AdminSite, chronicum_id: str) -> str:
    """The acta changelist filtered to one chronicum."""
    url = reverse(f"{admin_site.name}:chronica_actum_changelist")
    return f"{url}?{urlencode({ChronicumFilter.parameter_name: chronicum_id})}"


@admin.register(models.Chronicum)
class ChronicumAdmin(ReadOnlyAdmin):
    list_display = ("id", "owner_id", "started_at", "last_activity_at", "acta_count")
    search_fields = ("id", "owner_id")
    list_filter = ("last_activity_at", "started_at")
    date_hierarchy = "last_activity_at"
    readonly_fields = ("acta_count",)
    fields = ("id", "owner_id", "started_at", "last_activity_at", "acta_count")
    change_form_template = "admin/chronica/chronicum/change_form.html"

    def get_queryset(self, request: HttpRequest) -> QuerySet[models.Chronicum]:
        # A correlated subquery, not a JOIN with GROUP BY: it is counted only for
        # the rows of the page, from the (chronicum_id, seq) index.
        count = (
            models.Actum.objects.filter(chronicum=OuterRef("pk"))
            .order_by()
            .values("chronicum")
            .annotate(n=Count("*"))
            .values("n")
        )
        queryset: QuerySet[models.Chronicum] = super().get_queryset(request)
        return queryset.annotate(
            acta_total=Coalesce(Subquery(count, output_field=IntegerField()), 0)
        )

    @admin.display(description="acta", ordering="acta_total")
    def acta_count(self, obj: models.Chronicum) -> int:
        return getattr(obj, "acta_total", 0)

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        change: bool = False,
        form_url: str = "",
        obj: models.Chronicum | None = None,
    ) -> HttpResponse:
        if obj is not None:
            context.update(self.transcript_context(obj))
        return super().render_change_form(request, context, add, change, form_url, obj)

    def transcript_context(self, chronicum: models.Chronicum) -> dict[str, Any]:
        """The most recent acta, read through the configured store, oldest first."""
        try:
            acta = get_chronicarius().store.acta(chronicum.id, ActaQuery(last_n=TRANSCRIPT_LIMIT))
        except ChronicumNotFound:
            acta = []  # the configured store is not the database the admin shows
        total = max(self.acta_count(chronicum), len(acta))
        first = total - len(acta) + 1
        return {
            "transcript": [transcript_line(first + i, a) for i, a in enumerate(acta)],
            "transcript_total": total,
            "transcript_limit": TRANSCRIPT_LIMIT,
            "transcript_truncated": total > len(acta),
            "acta_changelist_url": acta_changelist_url(self.admin_site, chronicum.id),
        }

    def get_deleted_objects(
        self, objs: Iterable[models.Chronicum], request: HttpRequest
    ) -> tuple[list[Any], dict[str, int], set[str], list[Any]]:
        # Acta go with their chronicum and nobody may delete one alone, so the
        # confirmation counts them instead of listing (and permission-checking)
        # every row of a possibly huge session.
        chronica = list(objs)
        counts = dict(
            models.Actum.objects.filter(chronicum__in=chronica)
            .order_by()
            .values_list("chronicum")
            .annotate(n=Count("*"))
        )
        listed: list[Any] = []
        for chronicum in chronica:
            url = reverse(
                f"{self.admin_site.name}:chronica_chronicum_change", args=[quote(chronicum.pk)]
            )
            listed.append(format_html('Chronicum: <a href="{}">{}</a>', url, chronicum.id))
            listed.append([f"{counts.get(chronicum.pk, 0)} acta"])
        model_count = {
            str(models.Chronicum._meta.verbose_name_plural): len(chronica),
            str(models.Actum._meta.verbose_name_plural): sum(counts.values()),
        }
        return listed, model_count, set(), []


class ChronicumFilter(admin.SimpleListFilter):
    """By chronicum, offering only the selected one and the most recently active few
    (a choice of every chronicum would not fit on a page)."""

    title = "chronicum"
    parameter_name = "chronicum"
    recent = 10

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        recent = list(
            models.Chronicum.objects.order_by("-last_activity_at").values_list("id", flat=True)[
                : self.recent
            ]
        )
        selected = self.value()
        if selected and selected not in recent:
            recent.insert(0, selected)
        return [(chronicum_id, chronicum_id) for chronicum_id in recent]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value():
            return queryset.filter(chronicum_id=self.value())
        return queryset


@admin.register(models.Actum)
class ActumAdmin(ReadOnlyAdmin):
    list_display = ("seq", "chronicum_link", "kind", "actor_kind", "actor", "short_content", "at")
    list_display_links = ("seq",)
    list_filter = ("kind", "actor_kind", ChronicumFilter)
    search_fields = ("content", "actor")
    fields = (
        "seq",
        "id",
        "chronicum",
        "kind",
        "actor_kind",
        "actor",
        "content",
        "at",
        "idempotency_key",
    )

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # An actum goes only with its whole chronicum.
        return False

    @admin.display(description="chronicum", ordering="chronicum_id")
    def chronicum_link(self, obj: models.Actum) -> str:
        url = reverse(
            f"{self.admin_site.name}:chronica_chronicum_change", args=[quote(obj.chronicum_id)]
        )
        return format_html('<a href="{}">{}</a>', url, obj.chronicum_id)

    @admin.display(description="content")
    def short_content(self, obj: models.Actum) -> str:
        text = " ".join(obj.content.split())
        return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS].rstrip() + "…"
