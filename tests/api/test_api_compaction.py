"""``.../fork/``, ``.../compactions/`` and ``?compacted=true`` over HTTP: the services'
``fork_chronicum``, ``compact`` and compacted windows, with the owner's rules."""

from __future__ import annotations

import pytest

from .. import scenario
from ..scenario import CHRONICUM
from .test_api import as_ardian, as_rafa, body, dinner, window

__all__ = ["as_ardian", "as_rafa", "dinner"]  # fixtures

FORK = f"/api/chronica/{CHRONICUM}/fork/"
COMPACTIONS = f"/api/chronica/{CHRONICUM}/compactions/"
SUMMARY = {
    "kind": "thought",
    "actor_kind": "agent",
    "actor": "concierge",
    "content": "ardian wants Rumah Teduh for four at 7pm on Friday; booking holds it.",
}


def compact(client, through, acta=(SUMMARY,), *, key=None, url=COMPACTIONS):
    headers = {} if key is None else {"Idempotency-Key": key}
    return client.post(
        url, {"through": through, "acta": list(acta)}, format="json", headers=headers
    )


@pytest.mark.django_db
class TestFork:
    def test_a_fork_from_an_actum_into_a_chosen_id(self, as_ardian, dinner):
        answer = as_ardian.post(
            FORK, {"through": dinner[2]["id"], "id": "dinner-kayu-manis"}, format="json"
        )
        assert answer.status_code == 201, answer.content
        assert answer.json()["id"] == "dinner-kayu-manis"
        assert answer.headers["Location"].endswith("/api/chronica/dinner-kayu-manis/")
        copies = window(as_ardian, chronicum_id="dinner-kayu-manis")
        assert [a["content"] for a in copies] == [a["content"] for a in dinner[:3]]
        assert [a["at"] for a in copies] == [a["at"] for a in dinner[:3]]
        assert not {a["id"] for a in copies} & {a["id"] for a in dinner}
        assert len(window(as_ardian)) == 7

    def test_a_whole_fork_with_a_minted_id(self, as_ardian, dinner):
        answer = as_ardian.post(FORK, {}, format="json")
        assert answer.status_code == 201
        assert len(window(as_ardian, chronicum_id=answer.json()["id"])) == 7

    def test_refusals(self, as_ardian, as_rafa, dinner):
        assert as_rafa.post(FORK, {}, format="json").status_code == 404
        assert as_ardian.post("/api/chronica/nope/fork/", {}, format="json").status_code == 404
        bad = as_ardian.post(FORK, {"through": "no-such-actum"}, format="json")
        assert bad.status_code == 400
        assert "through" in bad.json()["detail"]
        assert as_ardian.post(FORK, {"id": CHRONICUM}, format="json").status_code == 409
        assert as_ardian.post(FORK, {"id": "a/b"}, format="json").status_code == 400
        assert as_ardian.post(FORK, {"other": 1}, format="json").status_code == 400
        assert as_ardian.post(FORK, [], format="json").status_code == 400


@pytest.mark.django_db
class TestCompactions:
    def test_a_compaction_and_the_compacted_window(self, as_ardian, dinner):
        answer = compact(as_ardian, dinner[5]["id"])
        assert answer.status_code == 201, answer.content
        (stored,) = answer.json()
        assert stored["compacts"] == dinner[5]["id"]
        assert stored["content"] == SUMMARY["content"]
        assert all(a["compacts"] == "" for a in dinner)
        # Nothing hidden from a reader that does not ask.
        every = window(as_ardian)
        assert [a["id"] for a in every] == [a["id"] for a in dinner] + [stored["id"]]
        compacted = window(as_ardian, "?compacted=true")
        assert [a["id"] for a in compacted] == [stored["id"], dinner[6]["id"]]
        assert window(as_ardian, "?compacted=true&last_n=1") == [dinner[6]]
        assert window(as_ardian, "?compacted=false") == every

    def test_a_keyed_compaction_is_replayed(self, as_ardian, dinner):
        first = compact(as_ardian, dinner[6]["id"], key="compaction-1")
        again = compact(
            as_ardian, dinner[6]["id"], [body(scenario.booking_reply())], key="compaction-1"
        )
        assert again.status_code == 200
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.json() == first.json()

    def test_refusals_write_nothing(self, as_ardian, as_rafa, dinner):
        assert compact(as_rafa, dinner[6]["id"]).status_code == 404
        bad = compact(as_ardian, "no-such-actum")
        assert bad.status_code == 400
        assert "through" in bad.json()["detail"]
        assert compact(as_ardian, dinner[6]["id"], []).status_code == 400
        assert compact(as_ardian, dinner[6]["id"], [{"kind": "message"}]).status_code == 400
        other = f"/api/chronica/{CHRONICUM}-other/compactions/"
        assert compact(as_ardian, dinner[6]["id"], url=other).status_code == 404
        assert as_ardian.post(COMPACTIONS, {"acta": [SUMMARY]}, format="json").status_code == 400
        assert window(as_ardian) == dinner

    def test_a_bad_compacted_value_is_a_400(self, as_ardian, dinner):
        url = f"/api/chronica/{CHRONICUM}/acta/?compacted=maybe"
        assert as_ardian.get(url).status_code == 400
