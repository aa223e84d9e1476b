"""Browse and inspect chronica in the Django admin, read-only.

A chronicum is an append-only record: nobody adds or changes a chronicum or an
actum here. A whole chronicum, with its acta, may be deleted by a user holding
its delete permission (an erasure request), through ``chronica.services``; a
single actum never is.

Every page stays bounded however large a session or an actum grows: acta are
read from the database cut to their first few KB (never whole), a transcript
shows the most recent ``TRANSCRIPT_LIMIT`` acta, and the whole of an actum is
streamed by a view of its own in chunks.

The model admins are here; what a page shows of an actum and the transcript are in
``display``, the list filters in ``filters``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import admin
from django.contrib.admin.options import csrf_protect_m
from django.contrib.admin.utils import quote, unquote
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery, TextField
from django.db.models.functions import Cast, Coalesce, Substr
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
    StreamingHttpResponse,
)
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from .. import models, services
from ..errors import ChronicumNotFound
from ..owners import owner_label as user_label
from ..services.credentials import parse_duration
from .display import (
    RAW_CHUNK_CHARS,
    TRANSCRIPT_LIMIT,
    Shown,
    bounded_acta,
    preview,
    raw_url,
    shown,
    transcript,
)
from .filters import (
    CallIdFilter,
    ChronicumFilter,
    OwnerFilter,
    acta_changelist_url,
    owner_label,
    users_by_owner,
)

_RAW_FIELDS = {"content": "text/plain; charset=utf-8", "data": "application/json"}

__all__ = ["TRANSCRIPT_LIMIT", "ActumAdmin", "ChronicumAdmin", "ReadOnlyAdmin", "shown"]


# -- the model admins ---------------------------------------------------------------


class ReadOnlyAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """No add and no change, every field read-only (the view permission shows a page)."""

    class Media:
        css = {"all": ["chronica/admin/transcript.css"]}

    show_full_result_count = False  # a second COUNT(*) over a huge table buys nothing

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        model_fields = [f.name for f in self.model._meta.concrete_fields]
        return [*model_fields, *self.readonly_fields]


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

    # -- erasure ----------------------------------------------------------------

    @csrf_protect_m  # type: ignore[untyped-decorator]
    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        # Django runs a confirmed delete inside one transaction that reads before it
        # writes; on SQLite such a transaction cannot take the write lock while an
        # agent's write holds it ("database is locked" at once, not after waiting).
        # The delete below is a transaction of its own that takes the lock first.
        return self._delete_view(request, object_id, extra_context)  # type: ignore[attr-defined,no-any-return]

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
    list_display_links = ("seq",)
    ordering = ("-seq",)  # the newest acta first; a transcript reads in write order
    list_filter = ("kind", "actor_kind", ChronicumFilter, CallIdFilter)
    search_fields = ("content", "actor")
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
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[models.Actum]:
        return bounded_acta(super().get_queryset(request))

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # An actum goes only with its whole chronicum.
        return False

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


# -- agent credentials (issue 21) ------------------------------------------------------


class OwnerChoiceField(forms.ModelChoiceField):  # type: ignore[type-arg]
    """The project's users, each shown as ``ardian (1)``: the user name and the owner ID
    ``CHRONICA["OWNER_ID"]`` makes of it, so that nobody types a user name where an
    owner ID belongs (a credential for an owner nobody is)."""

    def label_from_instance(self, obj: Any) -> str:
        return user_label(obj)


def _users() -> QuerySet[Any]:
    user_model = get_user_model()
    return user_model._default_manager.filter(is_active=True).order_by(user_model.USERNAME_FIELD)


class AgentCredentialForm(forms.ModelForm):  # type: ignore[type-arg]
    """The form that issues a credential; every rule is ``services.issue_credential``'s."""

    owner = OwnerChoiceField(
        queryset=None,
        help_text="The person whose sessions the agent writes into (user name and owner ID).",
    )

    actor_kinds = forms.MultipleChoiceField(
        choices=[("agent", "agent"), ("system", "system")],
        initial=["agent"],
        widget=forms.CheckboxSelectMultiple,
        help_text="Never human.",
    )
    chronica = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="The chronicum IDs it may use, one a line; empty: all the owner's.",
    )
    expires_in = forms.CharField(
        required=False, help_text="90s, 15m, 12h, 7d, 2w; empty: never expires."
    )

    class Meta:
        model = models.AgentCredential
        fields = ["actor", "may_list", "may_delete", "may_pop"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["owner"].queryset = _users()  # type: ignore[attr-defined]

    def clean_chronica(self) -> list[str] | None:
        lines = [line.strip() for line in self.cleaned_data["chronica"].splitlines()]
        return [line for line in lines if line] or None

    def clean_expires_in(self) -> Any:
        text = self.cleaned_data["expires_in"].strip()
        if not text:
            return None
        try:
            return parse_duration(text)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None


@admin.register(models.AgentCredential)
class AgentCredentialAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """Issue an agent a credential (its secret shown once, on the page after saving),
    see when each was last used, revoke them. The secret's hash is never shown."""

    list_display = (
        "key_id",
        "owner_id",
        "actor",
        "kinds",
        "state",
        "created_at",
        "expires_at",
        "last_used_at",
    )
    list_filter = ("revoked_at",)
    search_fields = ("key_id", "owner_id", "actor")
    actions = ["revoke"]
    shown_fields = (
        "key_id",
        "owner_id",
        "actor",
        "actor_kinds",
        "chronica",
        "may_list",
        "may_delete",
        "may_pop",
        "created_at",
        "expires_at",
        "revoked_at",
        "last_used_at",
    )

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any):  # type: ignore[no-untyped-def]
        if obj is None:
            kwargs["form"] = AgentCredentialForm
            kwargs["fields"] = None
        return super().get_form(request, obj, change, **kwargs)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return [
                "owner",
                "actor",
                "actor_kinds",
                "chronica",
                "expires_in",
                "may_list",
                "may_delete",
                "may_pop",
            ]
        return self.shown_fields

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return () if obj is None else self.shown_fields

    @admin.display(description="actor kinds")
    def kinds(self, obj: models.AgentCredential) -> str:
        return ", ".join(obj.actor_kinds)

    @admin.display(description="state")
    def state(self, obj: models.AgentCredential) -> str:
        if obj.revoked_at is not None:
            return "revoked"
        if obj.expires_at is not None and obj.expires_at <= dt.datetime.now(dt.UTC):
            return "expired"
        return "active"

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if change:
            return  # every field is read-only: a credential is revoked, never edited
        data = form.cleaned_data
        try:
            issued = services.issue_credential(
                services.owner_id_for(data["owner"]),
                data["actor"],
                actor_kinds=data["actor_kinds"],
                chronica=data["chronica"],
                expires_in=data["expires_in"],
                may_list=data["may_list"],
                may_delete=data["may_delete"],
                may_pop=data["may_pop"],
            )
        except ValueError as exc:
            raise PermissionDenied(str(exc)) from exc
        fresh = models.AgentCredential.objects.get(pk=issued.info.key_id)
        obj.__dict__.update(fresh.__dict__)
        obj._chronica_secret = issued.secret

    def response_add(
        self, request: HttpRequest, obj: Any, post_url_continue: Any = None
    ) -> HttpResponse:
        secret = getattr(obj, "_chronica_secret", None)
        if secret is None:
            return super().response_add(request, obj, post_url_continue)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Credential {obj.key_id} issued to {obj.actor}",
            "opts": self.model._meta,
            "credential": obj,
            "secret": secret,
            "changelist_url": reverse(
                f"{self.admin_site.name}:chronica_agentcredential_changelist"
            ),
        }
        response = TemplateResponse(request, "admin/chronica/agentcredential/issued.html", context)
        response["Cache-Control"] = "no-store"
        return response

    @admin.action(description="Revoke the selected credentials")
    def revoke(self, request: HttpRequest, queryset: QuerySet[models.AgentCredential]) -> None:
        revoked = sum(services.revoke_credential(c.key_id) for c in queryset)
        self.message_user(request, f"{revoked} credential(s) revoked.")
