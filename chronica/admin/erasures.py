"""The erasures admin: the records ``erase_owner`` keeps (an owner hash, when, why,
the rows removed), read-only, never deleted here."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from .. import models
from .base import ReadOnlyAdmin

__all__ = ["ErasureAdmin"]


@admin.register(models.ErasureRecord)
class ErasureAdmin(ReadOnlyAdmin):
    list_display = ("owner_hash", "reason", "started_at", "completed_at", "state")
    list_filter = ("completed_at",)
    search_fields = ("owner_hash", "reason")
    date_hierarchy = "started_at"
    # The owner ID stays off the page, even while an erasure is under way.
    exclude = ("erasing_owner",)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return ["owner_hash", "reason", "started_at", "completed_at", "counts", "state"]

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return self.get_readonly_fields(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="state")
    def state(self, obj: models.ErasureRecord) -> str:
        return "complete" if obj.completed_at is not None else "under way (or interrupted)"
