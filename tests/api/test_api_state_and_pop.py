"""``.../state/`` and ``.../acta/pop/`` over HTTP: the services' ``get_state``,
``update_state`` and ``pop_actum``, with the owner's and the agents' rules of every
other route."""

from __future__ import annotations

import concurrent.futures
import json
import urllib.error
import urllib.request

import pytest
from rest_framework.test import APIClient

from chronica import services

from .. import scenario
from ..scenario import CHRONICUM
from .test_api import as_ardian, as_rafa, body, dinner, post

__all__ = ["as_ardian", "as_rafa", "dinner"]  # fixtures

STATE = f"/api/chronica/{CHRONICUM}/state/"
POP = f"/api/chronica/{CHRONICUM}/acta/pop/"
TABLE = {"namespace": "dinner", "set": {"table": "Rumah Teduh", "party": 4}}
DIET = {"namespace": "dinner", "scope": "owner", "set": {"diet": "vegetarian"}}


def agent(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def change(client: APIClient, *changes: dict, chronicum_id: str = CHRONICUM, **extra):
    url = f"/api/chronica/{chronicum_id}/state/"
    return client.post(url, {"changes": list(changes), **extra}, format="json")


def state(client: APIClient, namespace: str = "dinner", chronicum_id: str = CHRONICUM):
    return client.get(f"/api/chronica/{chronicum_id}/state/?namespace={namespace}")


@pytest.fixture
def owner(ardian) -> str:
    return services.owner_id_for(ardian)


@pytest.mark.django_db
class TestState:
    def test_written_together_and_read_back(self, as_ardian, dinner, owner):
        assert change(as_ardian, TABLE, DIET).status_code == 204
        answer = state(as_ardian)
        assert answer.status_code == 200
        assert answer.json() == {
            "namespace": "dinner",
            "chronicum_state": {"table": "Rumah Teduh", "party": 4},
            "owner_state": {"diet": "vegetarian"},
        }
        # What the services read.
        read = services.get_state(owner, "dinner", CHRONICUM)
        assert (read.chronicum_state, read.owner_state) == (TABLE["set"], DIET["set"])

    def test_a_namespace_with_nothing_yet(self, as_ardian, dinner):
        assert state(as_ardian, "lunch").json() == {
            "namespace": "lunch",
            "chronicum_state": None,
            "owner_state": {},
        }

    def test_paths_replace_and_expect(self, as_ardian, dinner):
        change(as_ardian, TABLE)
        nested = {"namespace": "dinner", "path": ["booking"], "set": {"ref": "RT-4821"}}
        assert change(as_ardian, nested).status_code == 204
        whole = {
            "namespace": "dinner",
            "replace": True,
            "set": {"party": 5},
            "expect": {"party": 4},
        }
        assert change(as_ardian, whole).status_code == 204
        assert state(as_ardian).json()["chronicum_state"] == {"party": 5}

    def test_an_expectation_that_fails_changes_nothing(self, as_ardian, dinner):
        change(as_ardian, TABLE)
        stale = {"namespace": "dinner", "set": {"party": 6}, "expect": {"party": 2}}
        answer = change(as_ardian, DIET, stale)
        assert answer.status_code == 409
        assert "not as expected" in answer.json()["detail"]
        assert state(as_ardian).json()["owner_state"] == {}
        assert state(as_ardian).json()["chronicum_state"]["party"] == 4

    def test_someone_elses_chronicum_is_404_and_unchanged(self, as_ardian, as_rafa, dinner):
        change(as_ardian, TABLE)
        for answer in (state(as_rafa), change(as_rafa, {**TABLE, "set": {"table": "x"}})):
            assert (answer.status_code, answer.json()) == (404, {"detail": "Not found."})
        missing = state(as_rafa, chronicum_id="never-existed")
        assert missing.json() == state(as_rafa).json()
        assert state(as_ardian).json()["chronicum_state"]["table"] == "Rumah Teduh"

    def test_create(self, as_ardian, as_rafa, dinner):
        assert change(as_ardian, TABLE, chronicum_id="dinner-saturday").status_code == 404
        created = change(as_ardian, TABLE, chronicum_id="dinner-saturday", create=True)
        assert created.status_code == 204
        assert state(as_ardian, chronicum_id="dinner-saturday").status_code == 200
        taken = change(as_rafa, TABLE, chronicum_id="dinner-saturday", create=True)
        assert taken.status_code == 409

    @pytest.mark.parametrize(
        ("payload", "said"),
        [
            ({"changes": [{**TABLE, "scope": "namespace"}]}, "change 0: scope 'namespace' is not"),
            ({"changes": [TABLE, {"set": {}}]}, "change 1: missing field(s): namespace"),
            ({"changes": [{**TABLE, "scope": "room"}]}, "unknown state scope 'room'"),
            ({"changes": [{**TABLE, "set": [1]}]}, "set must be a mapping"),
            ({"changes": [{**TABLE, "path": "booking"}]}, "path must be a tuple of strings"),
            ({"changes": [{**TABLE, "namespace": ""}]}, "names no namespace"),
            ({"changes": [{**TABLE, "set": {"a": "\x00"}}]}, "NUL"),
            ({"changes": [TABLE], "create": "yes"}, "create must be true or false"),
            ({"changes": [TABLE], "namespace": "dinner"}, "unknown field(s): namespace"),
            ({"changes": TABLE}, "changes must be a JSON array"),
            ([TABLE], "must be a JSON object"),
            ({}, "missing field(s): changes"),
        ],
    )
    def test_a_bad_body_is_a_400_and_changes_nothing(self, as_ardian, dinner, payload, said):
        answer = as_ardian.post(STATE, payload, format="json")
        assert answer.status_code == 400, answer.content
        assert said in answer.json()["detail"]
        assert state(as_ardian).json()["chronicum_state"] is None

    @pytest.mark.parametrize("query", ["", "?namespace=", "?namespace=dinner&scope=owner"])
    def test_a_bad_query_is_a_400(self, as_ardian, dinner, query):
        assert as_ardian.get(STATE + query).status_code == 400

    def test_an_agent_reaches_only_the_chronica_its_credential_names(self, as_ardian, owner):
        post(as_ardian, body(scenario.acta()[0]))
        post(as_ardian, body(scenario.acta()[0]), chronicum_id="lunch")
        secret = services.issue_credential(owner, "booking", chronica=[CHRONICUM]).secret
        assert change(agent(secret), TABLE).status_code == 204
        assert state(agent(secret)).json()["chronicum_state"] == TABLE["set"]
        assert change(agent(secret), TABLE, chronicum_id="lunch").status_code == 404
        assert state(agent(secret), chronicum_id="lunch").status_code == 404


def pop(client: APIClient, chronicum_id: str = CHRONICUM):
    return client.post(f"/api/chronica/{chronicum_id}/acta/pop/")


@pytest.mark.django_db
class TestPop:
    def test_the_newest_actum_leaves_and_comes_back(self, as_ardian, dinner):
        answer = pop(as_ardian)
        assert (answer.status_code, answer.json()) == (200, dinner[-1])
        assert as_ardian.get(f"/api/chronica/{CHRONICUM}/acta/").json() == dinner[:-1]
        assert pop(as_ardian).json() == dinner[-2]

    def test_none_left_is_204(self, as_ardian, dinner):
        for _ in dinner:
            assert pop(as_ardian).status_code == 200
        empty = pop(as_ardian)
        assert (empty.status_code, empty.content) == (204, b"")

    def test_someone_elses_chronicum_is_404_and_untouched(self, as_ardian, as_rafa, dinner):
        answer = pop(as_rafa)
        assert (answer.status_code, answer.json()) == (404, {"detail": "Not found."})
        assert pop(as_rafa, "never-existed").json() == answer.json()
        assert len(as_ardian.get(f"/api/chronica/{CHRONICUM}/acta/").json()) == len(dinner)

    def test_an_agent_pops_only_where_its_owner_allowed(self, as_ardian, dinner, owner):
        plain = services.issue_credential(owner, "booking").secret
        refused = pop(agent(plain))
        assert (refused.status_code, refused.json()["rule"]) == (403, "pop")
        allowed = services.issue_credential(owner, "booking", may_pop=True).secret
        assert pop(agent(allowed)).json() == dinner[-1]
        elsewhere = services.issue_credential(owner, "booking", may_pop=True, chronica=["x"])
        assert pop(agent(elsewhere.secret)).status_code == 404

    def test_no_query_no_get(self, as_ardian, dinner):
        assert as_ardian.post(POP + "?last_n=1").status_code == 400
        assert as_ardian.get(POP).status_code == 405


@pytest.mark.django_db(transaction=True)
def test_pops_at_once_never_answer_the_same_actum(live_server, ardian):
    """Over real HTTP, eight clients popping at once: each actum once, none lost."""
    owner = services.owner_id_for(ardian)
    stored = services.record_acta(owner, scenario.acta() * 3)
    secret = services.issue_credential(owner, "booking", may_pop=True).secret

    def one_pop(_: int) -> tuple[int, str | None]:
        request = urllib.request.Request(
            f"{live_server.url}{POP}", method="POST", headers={"Authorization": f"Bearer {secret}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                raw = answer.read()
                return answer.status, json.loads(raw)["id"] if raw else None
        except urllib.error.HTTPError as refused:
            return refused.code, None

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(one_pop, range(len(stored) + 8)))
    popped = [actum_id for status, actum_id in answers if status == 200]
    assert sorted(popped) == sorted(a.id for a in stored)
    assert [status for status, _ in answers].count(204) == 8
    assert services.get_acta(owner, CHRONICUM) == []
