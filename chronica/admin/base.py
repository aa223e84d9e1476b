"""What the model admins of chronica share: read-only pages."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

__all__ = ["ReadOnlyAdmin"]


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
