"""The admin shows a compaction as one, the acta it compacts folded but there, and
forks a chronicum from any actum of its transcript."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from chronica import ActorKind, Actum, ActumKind, services

from ..scenario import CHRONICUM, OWNER
from .test_admin import change_url, record_dinner, staff, transcript_contents

pytestmark = pytest.mark.django_db

SUMMARY = "ardian wants Rumah Teduh for four at 7pm on Friday."


def compact(through: str) -> list[Actum]:
    summary = Actum(
        chronicum_id=CHRONICUM,
        kind=ActumKind.THOUGHT,
        actor_kind=ActorKind.AGENT,
        actor="concierge",
        content=SUMMARY,
    )
    return services.compact(OWNER, CHRONICUM, [summary], through=through)


def test_the_transcript_shows_a_compaction_folded(admin_client):
    dinner = record_dinner()
    compact(dinner[5].id)
    html = admin_client.get(change_url(CHRONICUM)).content.decode()
    # Every actum is still there, in write order, the summary last.
    contents = transcript_contents(html)
    assert len(contents) == 8
    assert contents[-1] == SUMMARY
    assert html.count("chronica-compacted-badge") == 6
    assert "compaction through" in html
    assert dinner[5].id in html
    folded = re.findall(r'<li class="[^"]*chronica-compacted[^"]*"', html)
    assert len(folded) == 6


def test_fork_from_here(admin_client):
    dinner = record_dinner()
    html = admin_client.get(change_url(CHRONICUM)).content.decode()
    assert html.count("fork from here") == 7
    url = reverse("admin:chronica_chronicum_fork", args=[CHRONICUM])
    response = admin_client.post(url, {"through": dinner[2].id})
    assert response.status_code == 302
    forked = response["Location"].rstrip("/").split("/")[-2]
    copies = services.get_acta(OWNER, forked)
    assert [a.content for a in copies] == [a.content for a in dinner[:3]]
    assert admin_client.get(url).status_code == 405
    assert admin_client.post(url, {"through": "no-such-actum"}).status_code == 404


def test_a_viewer_may_not_fork():
    record_dinner()
    viewer = staff("viewer", "view_chronicum", "view_actum")
    assert "fork from here" not in viewer.get(change_url(CHRONICUM)).content.decode()
    url = reverse("admin:chronica_chronicum_fork", args=[CHRONICUM])
    assert viewer.post(url, {}).status_code == 403
    assert len(services.list_chronica(OWNER)) == 1
