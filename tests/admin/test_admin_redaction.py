"""The acta admin's redact action: a page asks for the reason, then every selected
actum is redacted through the services; only for those who may change acta."""

from __future__ import annotations

import pytest
from django.urls import reverse

from chronica import models, services

from .. import scenario
from ..scenario import CHRONICUM, OWNER
from .test_admin import staff

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:chronica_actum_changelist"


@pytest.fixture
def dinner():
    return [services.record_actum(OWNER, a) for a in scenario.acta()]


def seqs(*acta) -> list[int]:
    return [models.Actum.objects.get(id=a.id).seq for a in acta]


def test_the_reason_is_asked_then_the_acta_are_redacted(dinner):
    client = staff("maya", "view_actum", "change_actum")
    chosen = seqs(dinner[2], dinner[3])
    form = {"action": "redact", "_selected_action": chosen}
    page = client.post(reverse(CHANGELIST), form)
    assert page.status_code == 200
    assert b'name="reason"' in page.content
    assert all(a.redacted is None for a in services.get_acta(OWNER, CHRONICUM))
    done = client.post(reverse(CHANGELIST), {**form, "apply": "1", "reason": "tool output"})
    assert done.status_code == 302
    window = services.get_acta(OWNER, CHRONICUM)
    assert [a.redacted is not None for a in window] == [
        False,
        False,
        True,
        True,
        False,
        False,
        False,
    ]
    assert {a.redacted.reason for a in window if a.redacted} == {"tool output"}
    assert window[2].content == ""
    assert window[3].data is None
    detail = client.get(reverse("admin:chronica_actum_change", args=[chosen[0]]))
    assert b"tool output" in detail.content


def test_viewers_have_no_such_action(dinner):
    client = staff("noor", "view_actum")
    form = {"action": "redact", "_selected_action": seqs(dinner[2]), "apply": "1"}
    client.post(reverse(CHANGELIST), form)
    assert services.get_acta(OWNER, CHRONICUM)[2].redacted is None
    listing = client.get(reverse(CHANGELIST))
    assert b'value="redact"' not in listing.content


@pytest.mark.django_db(transaction=True)
def test_erasure_records_are_listed_without_the_owner(dinner):
    services.erase_owner(OWNER, reason="asked to be forgotten")
    client = staff("maya-erasures", "view_erasurerecord")
    listing = client.get(reverse("admin:chronica_erasurerecord_changelist"))
    assert listing.status_code == 200
    assert b"asked to be forgotten" in listing.content
    record = models.ErasureRecord.objects.get()
    page = client.get(reverse("admin:chronica_erasurerecord_change", args=[record.pk]))
    assert page.status_code == 200
    assert record.owner_hash.encode() in page.content
    assert f">{OWNER}<".encode() not in page.content
