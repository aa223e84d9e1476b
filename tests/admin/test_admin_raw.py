"""The admin's "Show all" view answers a staff user without the view permission the
same whether the actum exists or not: it must not tell which acta exist."""

from __future__ import annotations

import pytest
from django.contrib.admin import site
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse

from chronica import models, services

from .. import scenario
from ..scenario import OWNER

pytestmark = pytest.mark.django_db


def staff(username: str, *codenames: str) -> Client:
    user = User.objects.create_user(username, password="pw", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


def raw(seq: int, field: str = "content") -> str:
    return reverse("admin:chronica_actum_raw", args=[seq, field])


@pytest.fixture
def reply_seq() -> int:
    actum = services.record_actum(OWNER, scenario.booking_reply())
    return models.Actum.objects.get(id=actum.id).seq


def test_without_the_view_permission_an_actum_and_no_actum_answer_the_same(reply_seq):
    support = staff("support", "view_chronicum")
    missing = reply_seq + 1000
    answers = [
        support.get(raw(reply_seq)),
        support.get(raw(missing)),
        support.get(raw(reply_seq, "idempotency_key")),
        support.get(raw(missing, "idempotency_key")),
    ]
    assert [a.status_code for a in answers] == [403] * 4
    assert len({a.content for a in answers}) == 1


def test_with_it_the_actum_is_shown_and_a_missing_one_is_404(reply_seq):
    auditor = staff("auditor", "view_actum")
    shown = auditor.get(raw(reply_seq))
    assert shown.status_code == 200
    assert b"".join(shown.streaming_content).decode() == scenario.BOOKING_REPLY
    assert auditor.get(raw(reply_seq + 1000)).status_code == 404
    assert auditor.get(raw(reply_seq, "idempotency_key")).status_code == 404


def test_an_object_permission_that_denies_one_actum_answers_as_if_missing(reply_seq, monkeypatch):
    """A project whose admin denies some acta object by object (a subclass's
    ``has_view_permission(request, obj)``): a denied actum is a missing one."""
    actum_admin = site._registry[models.Actum]
    monkeypatch.setattr(actum_admin, "has_view_permission", lambda request, obj=None: obj is None)
    auditor = staff("auditor", "view_actum")
    denied, missing = auditor.get(raw(reply_seq)), auditor.get(raw(reply_seq + 1000))
    assert (denied.status_code, denied.content) == (missing.status_code, missing.content)
    assert denied.status_code == 404
