"""What the admin's pages show of an actum: its texts bounded to a few KB, and the
transcript of a chronicum's most recent acta."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

from django.contrib import admin
from django.db.models import QuerySet, TextField
from django.db.models.functions import Cast, Length, Substr
from django.urls import reverse
from django.utils.html import escape

from .. import models
from ..services.identity import provenance
from .filters import acta_changelist_url

TRANSCRIPT_LIMIT = 200
"""The change page of a chronicum shows at most this many of its most recent acta."""

SHOWN_BYTES = 4096
"""At most this many bytes of HTML show an actum's content, and as many its data."""

RAW_CHUNK_CHARS = 256 * 1024
"""The whole of an actum is read from the database this many characters at a time."""

FOLD_CHARS = 600
FOLD_LINES = 16
PREVIEW_CHARS = 160


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
    provenance: str
    """Who wrote it: "owner", "credential <key ID>", or "not attested"."""
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
    id: str = ""
    compacts: str = ""
    """On an actum of a compaction, the ID of the actum it compacts through."""
    compacts_url: str = ""
    compacted: bool = False
    """Hidden by the newest compaction from a compacted window (shown folded)."""


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
    shown_ids = compacted_ids(chronicum_id, rows)
    by_id = {row.id: row.seq for row in rows}
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
                provenance=provenance(row.recorded_by),
                call_url=call_url,
                content=content,
                data=data,
                preview=preview(row.content_head),  # type: ignore[attr-defined]
                data_preview=json_preview(row.data_head, row.data_length),  # type: ignore[attr-defined]
                actum_url=reverse(f"{admin_site.name}:chronica_actum_change", args=[row.seq]),
                content_url=raw_url(admin_site, row.seq, "content"),
                data_url=raw_url(admin_site, row.seq, "data"),
                id=row.id,
                compacts=row.compacts or "",
                compacts_url=f"#actum-{by_id[row.compacts]}" if row.compacts in by_id else "",
                compacted=shown_ids is not None and row.id not in shown_ids,
            )
        )
    return lines


def compacted_ids(chronicum_id: str, rows: list[models.Actum]) -> set[str] | None:
    """The IDs of the acta of the chronicum's compacted view (``None`` where it has no
    compaction among ``rows``): the others the transcript shows folded, as compacted."""
    if not any(row.compacts for row in rows):
        return None
    from ..stores.db import DjangoStore
    from ..values import ActaQuery

    page = DjangoStore().window(None, chronicum_id, ActaQuery(compacted=True, last_n=len(rows)))
    return set() if page is None else {actum.id for actum in page[0]}


def raw_url(admin_site: admin.AdminSite, seq: int, field: str) -> str:
    return reverse(f"{admin_site.name}:chronica_actum_raw", args=[seq, field])
