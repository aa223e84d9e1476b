"""The acta admin's action: redact the selected acta, with a reason, through
``chronica.services.redact_actum`` (a page asks for the reason first)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse

from .. import models, services

__all__ = ["redact"]


@admin.action(
    description="Redact the selected acta (remove content and data)", permissions=["redact"]
)
def redact(
    modeladmin: Any, request: HttpRequest, queryset: QuerySet[models.Actum]
) -> TemplateResponse | None:
    acta = list(
        queryset.select_related("chronicum").only(
            "seq", "id", "kind", "actor", "chronicum_id", "chronicum__owner_id"
        )
    )
    if "apply" not in request.POST:
        context = {
            **modeladmin.admin_site.each_context(request),
            "title": "Redact acta",
            "opts": modeladmin.model._meta,
            "acta": acta,
        }
        return TemplateResponse(request, "admin/chronica/actum/redact.html", context)
    reason = request.POST.get("reason", "")[:1000]
    for actum in acta:
        services.redact_actum(actum.chronicum.owner_id, actum.chronicum_id, actum.id, reason=reason)
    modeladmin.message_user(request, f"{len(acta)} actum/acta redacted.")
    return None
