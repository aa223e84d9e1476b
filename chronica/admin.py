"""Browse and inspect chronica in the Django admin, read-only.

A chronicum is an append-only record: nobody adds or changes a chronicum or an
actum here. A whole chronicum, with its acta, may be deleted by a user holding
its delete permission (an erasure request), through ``chronica.services``; a
single actum never is.

Every page stays bounded however large a session or an actum grows: acta are
read from the database cut to their first few KB (never whole), a transcript
shows the most recent ``TRANSCRIPT_LIMIT`` acta, and the whole of an actum is
streamed by a view of its own in chunks.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.contrib.admin.options import csrf_protect_m
from django.contrib.admin.utils import quote, unquote
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import (
    Count,
    IntegerField,
    OuterRef,
    QuerySet,
    Subquery,
    TextField,
)
from django.db.models.functions import Cast, Coalesce, Length, Substr
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString

from . import models, services
from .conf import chronica_settings
from .errors import ChronicumNotFound
from .validation import storable

TRANSCRIPT_LIMIT = 200
"""The change page of a chronicum shows at most this many of its most recent acta."""

SHOWN_BYTES = 4096
"""At most this many bytes of HTML show an actum's content, and as many its data."""

RAW_CHUNK_CHARS = 256 * 1024
"""The whole of an actum is read from the database this many characters at a time."""

FOLD_CHARS = 600
FOLD_LINES = 16
PREVIEW_CHARS = 160

_RAW_FIELDS = {"content": "text/plain; charset=utf-8", "data": "application/json"}


# -- bounded text ---------------------------------------------------------------


def _escaped_size(text: str) -> int:
    return len(escape(text).encode())


def fit(text: str, limit: int) -> str:
    """A prefix of ``text`` whose HTML-escaped UTF-8 takes at most ``limit`` bytes
    (escaping can make a character six bytes, ``"`` into ``&quot;``)."""
    size = _escaped_size(text)
    while size > limit:
        text = text[: max(len(text) * limit // size - 1, 0)]
        size = _escaped_size(text)
    return text


@dataclasses.dataclass(frozen=True)
class Shown:
    """A bounded view of a stored text: what a page shows, and how long the whole is."""

    text: str
    length: int
    """Characters of the whole, as stored."""
    cut: bool
    is_json: bool = False

    @property
    def length_display(self) -> str:
        return f"{self.length:,}"

    @property
    def folded(self) -> bool:
        return len(self.text) > FOLD_CHARS or self.text.count("\n") >= FOLD_LINES


def shown(head: str | None, length: int | None, *, pretty: bool) -> Shown | None:
    """What a page shows of a text read as its first characters (``head``) and its
    length: JSON pretty-printed when ``pretty`` and the whole was read, else as stored;
    in every case at most ``SHOWN_BYTES`` once escaped."""
    if head is None:
        return None
    length = length or 0
    text, is_json = head, False
    if pretty and len(head) == length and head.strip():
        try:
            text = json.dumps(json.loads(head), indent=2, ensure_ascii=False)
            is_json = True
        except ValueError:
            pass
    bounded = fit(text, SHOWN_BYTES)
    return Shown(bounded, length, cut=bounded != text or len(head) < length, is_json=is_json)


def preview(text: str, chars: int = PREVIEW_CHARS) -> str:
    """One line of at most ``chars`` characters."""
    line = " ".join(text[: chars * 4].split())
    return line if len(line) <= chars else line[:chars].rstrip() + "…"


def json_preview(head: str | None, length: int | None) -> str:
    """One line of JSON the same on every database (each prints its JSON its own way)."""
    if head is None:
        return ""
    if len(head) == length:
        head = json.dumps(json.loads(head), ensure_ascii=False)
    return preview(head, 80)


def bounded_acta(queryset: QuerySet[models.Actum]) -> QuerySet[models.Actum]:
    """Acta with neither ``content`` nor ``data`` loaded: their first characters
    (``content_head``, ``data_head``) and lengths (``content_length``, ``data_length``)
    instead, so that a page of huge acta costs the worker a few KB each."""
    data = Cast("data", TextField())
    return queryset.defer("content", "data").annotate(
        content_head=Substr("content", 1, SHOWN_BYTES),
        content_length=Length("content"),
        data_head=Substr(data, 1, SHOWN_BYTES),
        data_length=Length(data),
    )


# -- owners -----------------------------------------------------------------------


def owners_are_users() -> bool:
    """Whether owner IDs are user primary keys (``CHRONICA["OWNER_ID"]`` is the default)."""
    from .api import owner_id_from_user

    return chronica_settings.owner_id_function() is owner_id_from_user


def users_by_owner(owner_ids: Iterable[str]) -> dict[str, Any]:
    """The users whose owner ID is among ``owner_ids``, in one query; nothing when
    owner IDs are not user primary keys."""
    if not owners_are_users():
        return {}
    user_model = get_user_model()
    pks = []
    for owner_id in set(owner_ids):
        try:
            pk = user_model._meta.pk.to_python(owner_id)
        except ValidationError:
            continue
        if str(pk) == owner_id and len(owner_id) < 19:  # beyond a BIGINT no user has it
            pks.append(pk)
    if not pks:
        return {}
    return {str(user.pk): user for user in user_model._default_manager.filter(pk__in=pks)}


def owner_label(owner_id: str, user: Any) -> str:
    """``1 (ardian)`` for the owner ID of a user, else the owner ID as it is."""
    return f"{owner_id} ({user.get_username()})" if user is not None else owner_id


class OwnerFilter(admin.SimpleListFilter):
    """By owner, typed in (an owner ID, or a user name where owners are users): a list
    of every owner would not fit on a page."""

    title = "owner"
    parameter_name = "owner"
    template = "admin/chronica/owner_filter.html"

    def __init__(self, request: HttpRequest, *args: Any) -> None:
        super().__init__(request, *args)
        # The filter's form keeps every other filter and the search.
        self.kept_params = [
            (name, value)
            for name, values in request.GET.lists()
            if name not in (self.parameter_name, "p")
            for value in values
        ]

    def has_output(self) -> bool:
        return True

    def owner_ids(self) -> list[str]:
        """The owner IDs the typed value names: itself, and the owner ID of the user
        with that user name."""
        value = self.value()
        if value is None or not storable(value):
            return []
        owner_ids = [value]
        if owners_are_users():
            user_model = get_user_model()
            found = user_model._default_manager.filter(
                **{user_model.USERNAME_FIELD: value}
            ).values_list("pk", flat=True)[:1]
            owner_ids += [str(pk) for pk in found if str(pk) != value]
        return owner_ids

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        value = self.value()
        if not value:
            return []
        owner_ids = self.owner_ids()
        users = users_by_owner(owner_ids)
        return [(value, ", ".join(owner_label(o, users.get(o)) for o in owner_ids) or value)]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value():
            return queryset.filter(owner_id__in=self.owner_ids())  # none for what no store keeps
        return queryset


# -- filters by one value ---------------------------------------------------------


class OneValueFilter(admin.SimpleListFilter):
    """A filter on one column that offers only the selected value (a choice of every
    value would not fit on a page); links elsewhere in the admin set it."""

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        value = self.value()
        return [(value, value)] if value else []

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        if not value:
            return queryset
        if not storable(value):
            return queryset.none()  # a NUL, say: no row holds it, and PostgreSQL refuses it
        return queryset.filter(**{str(self.parameter_name): value})


class ChronicumFilter(OneValueFilter):
    """By chronicum, offering the selected one and the most recently active few."""

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


class CallIdFilter(OneValueFilter):
    title = "call ID"
    parameter_name = "call_id"


def acta_changelist_url(
    admin_site: admin.AdminSite, chronicum_id: str, call_id: str | None = None
) -> str:
    """The acta changelist filtered to one chronicum (and to one tool call)."""
    url = reverse(f"{admin_site.name}:chronica_actum_changelist")
    params = {ChronicumFilter.parameter_name: chronicum_id}
    if call_id:
        params[CallIdFilter.parameter_name] = call_id
    return f"{url}?{urlencode(params)}"


# -- the transcript -----------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TranscriptLine:
    """One actum as the transcript template shows it."""

    position: int
    seq: int
    kind: str
    actor_kind: str
    actor: str
    at: dt.datetime | None
    call_id: str
    call_url: str
    """Where a tool response's request is: ``#actum-<seq>`` on the page, else the acta
    list filtered to the call."""
    content: Shown
    data: Shown | None
    preview: str
    data_preview: str
    actum_url: str
    content_url: str
    data_url: str


def transcript(admin_site: admin.AdminSite, chronicum_id: str, total: int) -> list[TranscriptLine]:
    """The most recent acta of the chronicum, oldest first, each one bounded; ``total``
    is how many acta the chronicum has (the position of the last)."""
    # A range on chronicum_id and a two-column ORDER BY keep PostgreSQL on the
    # (chronicum_id, seq) index instead of walking the primary key backwards.
    rows = list(
        bounded_acta(
            models.Actum.objects.filter(
                chronicum_id__gte=chronicum_id, chronicum_id__lte=chronicum_id
            )
        ).order_by("-chronicum_id", "-seq")[:TRANSCRIPT_LIMIT]
    )
    rows.reverse()
    first_position = max(total, len(rows)) - len(rows) + 1
    requests: dict[str, int] = {}
    lines = []
    for i, row in enumerate(rows):
        call_url = ""
        if row.call_id and row.kind == "tool_request":
            requests[row.call_id] = row.seq
        elif row.call_id:
            seq = requests.get(row.call_id)
            call_url = (
                f"#actum-{seq}"
                if seq is not None
                else acta_changelist_url(admin_site, chronicum_id, row.call_id)
            )
        tool = row.kind in ("tool_request", "tool_response")
        content = shown(row.content_head, row.content_length, pretty=tool)  # type: ignore[attr-defined]
        assert content is not None
        data = shown(row.data_head, row.data_length, pretty=True)  # type: ignore[attr-defined]
        lines.append(
            TranscriptLine(
                position=first_position + i,
                seq=row.seq,
                kind=row.kind,
                actor_kind=row.actor_kind,
                actor=row.actor,
                at=row.at,
                call_id=row.call_id,
                call_url=call_url,
                content=content,
                data=data,
                preview=preview(row.content_head),  # type: ignore[attr-defined]
                data_preview=json_preview(row.data_head, row.data_length),  # type: ignore[attr-defined]
                actum_url=reverse(f"{admin_site.name}:chronica_actum_change", args=[row.seq]),
                content_url=raw_url(admin_site, row.seq, "content"),
                data_url=raw_url(admin_site, row.seq, "data"),
            )
        )
    return lines


def raw_url(admin_site: admin.AdminSite, seq: int, field: str) -> str:
    return reverse(f"{admin_site.name}:chronica_actum_raw", args=[seq, field])


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
        "call",
        "short_content",
        "at",
    )
    list_display_links = ("seq",)
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
