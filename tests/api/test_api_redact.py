"""``POST .../acta/<actum_id>/redact/`` over HTTP: the services' ``redact_actum``."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from chronica import services

from ..scenario import CHRONICUM
from .test_api import as_ardian, as_rafa, dinner, window

__all__ = ["as_ardian", "as_rafa", "dinner"]  # fixtures


def redact(client: APIClient, actum_id: str, payload=None, *, slash: str = "/", **kwargs):
    url = f"/api/chronica/{CHRONICUM}/acta/{actum_id}/redact{slash}"
    return client.post(url, payload if payload is not None else {}, format="json", **kwargs)


@pytest.mark.django_db
class TestRedact:
    def test_the_actum_comes_back_emptied_and_says_why(self, as_ardian, dinner):
        target = dinner[2]
        answer = redact(as_ardian, target["id"], {"reason": "a card number"})
        assert answer.status_code == 200, answer.content
        got = answer.json()
        assert got["content"] == ""
        assert got["data"] is None
        assert got["redacted"]["reason"] == "a card number"
        assert set(got["redacted"]) == {"at", "reason"}
        assert {k: v for k, v in got.items() if k not in ("content", "data", "redacted")} == {
            k: v for k, v in target.items() if k not in ("content", "data", "redacted")
        }
        read = window(as_ardian)
        assert read[2] == got
        assert [a["redacted"] for i, a in enumerate(read) if i != 2] == [None] * 6

    def test_without_a_body_or_its_slash(self, as_ardian, dinner):
        answer = as_ardian.post(f"/api/chronica/{CHRONICUM}/acta/{dinner[0]['id']}/redact")
        assert answer.status_code == 200, answer.content
        assert answer.json()["redacted"]["reason"] == ""

    def test_a_repeat_keeps_the_first(self, as_ardian, dinner):
        first = redact(as_ardian, dinner[1]["id"], {"reason": "first"}).json()
        again = redact(as_ardian, dinner[1]["id"], {"reason": "again"})
        assert again.status_code == 200
        assert again.json() == first

    def test_bad_bodies_and_ids_are_400_and_change_nothing(self, as_ardian, dinner):
        assert redact(as_ardian, dinner[1]["id"], {"why": "x"}).status_code == 400
        assert redact(as_ardian, dinner[1]["id"], ["x"]).status_code == 400
        assert redact(as_ardian, dinner[1]["id"], {"reason": 5}).status_code in (200, 400)
        assert redact(as_ardian, "no-such-actum").status_code == 400
        assert window(as_ardian)[0]["redacted"] is None

    def test_another_owner_gets_404(self, as_rafa, as_ardian, dinner):
        answer = redact(as_rafa, dinner[1]["id"])
        assert answer.status_code == 404
        assert window(as_ardian)[1]["redacted"] is None

    def test_an_agent_credential_gets_403(self, ardian, as_ardian, dinner):
        owner = services.owner_id_for(ardian)
        issued = services.issue_credential(owner, "booking", chronica=[CHRONICUM])
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.secret}")
        answer = redact(client, dinner[1]["id"])
        assert answer.status_code == 403, answer.content
        assert window(as_ardian)[1]["redacted"] is None
