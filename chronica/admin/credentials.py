"""The agent-credential admin: issue an agent a credential, see when each was last
used, revoke them."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.exceptions import BadRequest
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse

from .. import models, services
from ..owners import owner_label as user_label
from ..services.credentials import parse_duration

__all__ = ["AgentCredentialAdmin", "AgentCredentialForm", "OwnerChoiceField"]


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
            # A value the form let through but the rules refuse (a chronicum ID no
            # chronicum can have, an expiry of no time): the request is wrong, 400.
            raise BadRequest(str(exc)) from exc
        # The unsaved instance of the form becomes the row the service wrote.
        obj.pk = issued.info.key_id
        obj.refresh_from_db()
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
