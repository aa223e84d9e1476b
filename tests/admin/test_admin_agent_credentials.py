"""Issue 21 in the admin: issuing a credential shows its secret once; the transcript
shows who wrote each actum beside its actor and marks the unattested ones."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.urls import reverse

from chronica import Actum, models, services
from chronica.services import AgentIdentity, OwnerIdentity

from ..credentials import on_file
from ..scenario import CHRONICUM, OWNER

pytestmark = pytest.mark.django_db

ADD = reverse("admin:chronica_agentcredential_add")
CHANGELIST = reverse("admin:chronica_agentcredential_changelist")


def said(actor_kind: str, actor: str, content: str) -> Actum:
    return Actum(
        chronicum_id=CHRONICUM, kind="message", actor_kind=actor_kind, actor=actor, content=content
    )


def test_issuing_shows_the_secret_once_and_stores_its_hash(admin_client, ardian):
    answer = admin_client.post(
        ADD,
        {
            "owner": ardian.pk,
            "actor": "booking",
            "actor_kinds": ["agent"],
            "chronica": f"{CHRONICUM}\n",
            "expires_in": "7d",
        },
    )
    assert answer.status_code == 200, answer.content[:2000]
    html = answer.content.decode()
    (secret,) = re.findall(r'<code id="chronica-secret"[^>]*>([^<]+)</code>', html)
    secret = unescape(secret)
    identity = services.authenticate_credential(secret)
    assert (identity.actor, identity.chronica) == ("booking", frozenset({CHRONICUM}))
    assert identity.owner_id == str(ardian.pk)
    assert "no-store" in answer["Cache-Control"]
    row = models.AgentCredential.objects.get()
    assert secret not in repr(row.__dict__)
    change = admin_client.get(reverse("admin:chronica_agentcredential_change", args=[row.pk]))
    assert change.status_code == 200
    assert secret not in change.content.decode()
    assert row.secret_hash not in change.content.decode()
    listing = admin_client.get(CHANGELIST).content.decode()
    assert row.key_id in listing
    assert "active" in listing


def test_a_human_kind_or_bad_duration_is_a_form_error(admin_client, ardian):
    answer = admin_client.post(
        ADD, {"owner": ardian.pk, "actor": "booking", "actor_kinds": ["human"], "expires_in": "x"}
    )
    assert answer.status_code == 200
    assert answer.context["adminform"].form.errors.keys() >= {"actor_kinds", "expires_in"}
    assert not models.AgentCredential.objects.exists()


@pytest.mark.parametrize(
    "bad",
    [{"chronica": "dinner\u200bfriday"}, {"expires_in": "0s"}],
    ids=["an invisible character in a chronicum ID", "an expiry of no time"],
)
def test_a_value_the_rules_refuse_is_a_bad_request_not_a_denial(admin_client, ardian, bad):
    """What the form lets through but ``services.issue_credential`` refuses is the
    request's fault (400): the user may issue credentials, so not 403."""
    answer = admin_client.post(
        ADD, {"owner": ardian.pk, "actor": "booking", "actor_kinds": ["agent"], **bad}
    )
    assert answer.status_code == 400
    assert not models.AgentCredential.objects.exists()


def test_the_issued_credential_is_the_row_the_service_wrote(admin_client, ardian):
    """The admin's own record of the addition (its log entry) names the stored row."""
    from django.contrib.admin.models import ADDITION, LogEntry

    admin_client.post(ADD, {"owner": ardian.pk, "actor": "booking", "actor_kinds": ["agent"]})
    row = models.AgentCredential.objects.get()
    entry = LogEntry.objects.get(action_flag=ADDITION)
    assert (entry.object_id, entry.object_repr) == (row.pk, str(row))


@pytest.fixture
def ardian(django_user_model):
    return django_user_model.objects.create_user("ardian")


def test_the_owner_is_picked_from_the_users_by_name_and_owner_id(admin_client, ardian):
    page = admin_client.get(ADD).content.decode()
    assert f'<option value="{ardian.pk}">ardian ({ardian.pk})</option>' in page
    # A user name typed where an owner ID belonged is no owner: a form error, nothing issued.
    answer = admin_client.post(
        ADD, {"owner": "ardian", "actor": "booking", "actor_kinds": ["agent"]}
    )
    assert answer.status_code == 200
    assert "owner" in answer.context["adminform"].form.errors
    assert not models.AgentCredential.objects.exists()


def test_the_owner_choices_go_through_owner_id(admin_client, ardian, settings):
    settings.CHRONICA = {"OWNER_ID": "tests.commands.test_agent_credential_command.by_name"}
    page = admin_client.get(ADD).content.decode()
    assert f'<option value="{ardian.pk}">ardian (user-ardian)</option>' in page
    answer = admin_client.post(
        ADD, {"owner": ardian.pk, "actor": "booking", "actor_kinds": ["agent"]}
    )
    assert answer.status_code == 200
    assert models.AgentCredential.objects.get().owner_id == "user-ardian"


def test_revoke_action(admin_client):
    issued = services.issue_credential(OWNER, "booking")
    admin_client.post(CHANGELIST, {"action": "revoke", "_selected_action": [issued.info.key_id]})
    assert models.AgentCredential.objects.get().revoked_at is not None


def test_the_transcript_shows_provenance_and_marks_the_unattested(admin_client):
    services.record_actum(OWNER, said("human", "ardian", "Seed-only writer."))
    services.acting_as(OwnerIdentity(OWNER)).record_actum(OWNER, said("human", "ardian", "Me."))
    agent = AgentIdentity(owner_id=OWNER, actor="booking", key_id="b00k1n9b00k1")
    on_file(agent)
    services.acting_as(agent).record_actum(OWNER, said("", "", "Held."))
    html = admin_client.get(reverse("admin:chronica_chronicum_change", args=[CHRONICUM]))
    marks = [
        unescape(m).strip()
        for m in re.findall(
            r'<span class="chronica-provenance[^"]*"[^>]*>(.*?)</span>', html.content.decode(), re.S
        )
    ]
    assert marks == ["⚠ not attested", "by owner", "by credential b00k1n9b00k1"]
    assert html.content.decode().count("chronica-unattested") == 1
