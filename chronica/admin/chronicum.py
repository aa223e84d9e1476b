"""The chronicum admin: the list of chronica, a chronicum's transcript, and its
erasure (with its acta) through ``chronica.services``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.contrib.admin.options import TO_FIELD_VAR
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import PermissionDenied
from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseNotAllowed,
    HttpResponseRedirect,
)
from django.urls import URLPattern, path, reverse
from django.utils.decorators import method_decorator
from django.utils.html import format_html
from django.views.decorators.csrf import csrf_protect

from .. import models, services
from ..errors import ChronicumNotFound, InvalidQuery
from .base import ReadOnlyAdmin
from .display import TRANSCRIPT_LIMIT, transcript
from .filters import OwnerFilter, acta_changelist_url, owner_label, users_by_owner

__all__ = ["ChronicumAdmin"]


@admin.register(models.Chronicum)
class ChronicumAdmin(ReadOnlyAdmin):
    list_display = ("id", "owner", "started_at", "last_activity_at", "acta_count")
    search_fields = ("id", "owner_id")
    list_filter = (OwnerFilter, "last_activity_at", "started_at")
    date_hierarchy = "last_activity_at"
    readonly_fields = ("owner", "acta_count")
    fields = ("id", "owner", "started_at", "last_activity_at", "acta_count")
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

    def get_changelist_instance(self, request: HttpRequest) -> Any:
        changelist = super().get_changelist_instance(request)
        users = users_by_owner(c.owner_id for c in changelist.result_list)
        for chronicum in changelist.result_list:
            chronicum.owner_user = users.get(chronicum.owner_id)
        return changelist

    @admin.display(description="owner", ordering="owner_id")
    def owner(self, obj: models.Chronicum) -> str:
        """The owner (``1 (ardian)`` where owners are users), linked to the list of
        the owner's chronica."""
        if hasattr(obj, "owner_user"):
            user = obj.owner_user
        else:
            user = users_by_owner([obj.owner_id]).get(obj.owner_id)
        url = reverse(f"{self.admin_site.name}:chronica_chronicum_changelist")
        query = urlencode({OwnerFilter.parameter_name: obj.owner_id})
        return format_html('<a href="{}?{}">{}</a>', url, query, owner_label(obj.owner_id, user))

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
            if request.user.has_perm("chronica.add_chronicum"):
                context["fork_url"] = reverse(
                    f"{self.admin_site.name}:chronica_chronicum_fork", args=[quote(obj.pk)]
                )
        return super().render_change_form(request, context, add, change, form_url, obj)

    def transcript_context(self, chronicum: models.Chronicum) -> dict[str, Any]:
        """The most recent acta, oldest first, each cut to what a page can carry."""
        total = self.acta_count(chronicum)
        lines = transcript(self.admin_site, chronicum.id, total)
        total = max(total, len(lines))  # acta recorded since the count was taken
        return {
            "transcript": lines,
            "transcript_total": total,
            "transcript_limit": TRANSCRIPT_LIMIT,
            "transcript_truncated": total > len(lines),
            "acta_changelist_url": acta_changelist_url(self.admin_site, chronicum.id),
        }

    # -- fork from here ------------------------------------------------------------

    def get_urls(self) -> list[URLPattern]:
        fork = path(
            "<path:object_id>/fork/",
            self.admin_site.admin_view(self.fork_view),
            name="chronica_chronicum_fork",
        )
        return [fork, *super().get_urls()]

    @method_decorator(csrf_protect)
    def fork_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """POST ``through`` (an actum ID): fork the chronicum from that actum through
        ``chronica.services``, as its owner, and go to the new chronicum. Forking
        creates a chronicum, so it takes the permission to add one."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not request.user.has_perm("chronica.add_chronicum"):
            raise PermissionDenied
        obj = self.get_object(request, unquote(object_id))
        if obj is None or not self.has_view_permission(request, obj):
            raise Http404("no such chronicum")
        through = request.POST.get("through") or None
        try:
            forked = services.fork_chronicum(obj.owner_id, obj.id, through=through)
        except (ChronicumNotFound, InvalidQuery) as exc:
            raise Http404(str(exc)) from None
        self.message_user(request, f"Forked {obj.id} into {forked.id}.")
        return HttpResponseRedirect(
            reverse(f"{self.admin_site.name}:chronica_chronicum_change", args=[quote(forked.id)])
        )

    # -- erasure ----------------------------------------------------------------

    @method_decorator(csrf_protect)
    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """Django's delete view, but a confirmed delete runs outside a transaction.

        Django runs a confirmed delete inside one transaction that reads before it
        writes; on SQLite such a transaction cannot take the write lock while an
        agent's write holds it ("database is locked" at once, not after waiting). So
        the confirmed delete of a chronicum that exists is done here, with the admin's
        public hooks, and ``delete_model``'s delete is a transaction of its own that
        takes the lock first. No acta are protected and no permission beyond the
        chronicum's is needed (``get_deleted_objects``), so nothing of the confirmation
        is counted again. The confirmation page, a chronicum gone meanwhile and a
        ``_to_field`` stay Django's."""
        confirmed = request.method == "POST" and bool(request.POST)
        if not confirmed or TO_FIELD_VAR in request.GET or TO_FIELD_VAR in request.POST:
            return super().delete_view(request, object_id, extra_context)
        obj = self.get_object(request, unquote(object_id))
        if not self.has_delete_permission(request, obj):
            raise PermissionDenied
        if obj is None:
            return super().delete_view(request, object_id, extra_context)
        obj_display = str(obj)
        obj_id = obj.serializable_value(self.opts.pk.attname)
        # A list, as Django's own delete view passes it (the stubs say a QuerySet).
        self.log_deletions(request, [obj])  # type: ignore[arg-type]
        self.delete_model(request, obj)
        return self.response_delete(request, obj_display, obj_id)

    def response_delete(self, request: HttpRequest, obj_display: str, obj_id: Any) -> HttpResponse:
        # Django goes back to the list only for those who may change a chronicum (nobody
        # may: the admin is read-only); whoever could delete one may view the list.
        response = super().response_delete(request, obj_display, obj_id)
        if isinstance(response, HttpResponseRedirect) and self.has_view_permission(request):
            return HttpResponseRedirect(
                reverse(f"{self.admin_site.name}:chronica_chronicum_changelist")
            )
        return response

    def delete_model(self, request: HttpRequest, obj: models.Chronicum) -> None:
        """Delete the chronicum and its acta through ``chronica.services``, as its owner:
        agents writing into it meanwhile never get an error (a write after the delete
        creates the chronicum again)."""
        # Deleted meanwhile (by its owner, or by chronica_purge) is gone either way.
        with contextlib.suppress(ChronicumNotFound):
            services.delete_chronicum(obj.owner_id, obj.id)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[models.Chronicum]) -> None:
        for chronicum in queryset:
            self.delete_model(request, chronicum)

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
