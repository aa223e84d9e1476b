"""The admin's list filters: by owner (typed in), by chronicum and by call ID."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse

from .. import models
from ..conf import chronica_settings
from ..validation.identifiers import storable

# -- owners -----------------------------------------------------------------------


def owners_are_users() -> bool:
    """Whether owner IDs are user primary keys (``CHRONICA["OWNER_ID"]`` is the default)."""
    from ..api import owner_id_from_user

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
