"""``GET /api/search/?q=``: the caller's acta across their chronica, best first, a page
at a time; only the caller's, and with an agent's credential only the chronica it names."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import override_settings

from chronica import Actum, services

from .. import scenario
from ..scenario import CHRONICUM
from .test_api import as_ardian, as_rafa
from .test_api_agents import agent

__all__ = ["as_ardian", "as_rafa"]  # fixtures

pytestmark = pytest.mark.django_db

LINK = re.compile(r'^<(?P<url>[^>]+)>; rel="next"$')


def say(chronicum_id: str, content: str, actor: str = "ardian") -> Actum:
    return Actum(
        chronicum_id=chronicum_id, kind="message", actor_kind="human", actor=actor, content=content
    )


@pytest.fixture
def sessions(ardian, rafa):
    ardian_id, rafa_id = services.owner_id_for(ardian), services.owner_id_for(rafa)
    services.record_acta(ardian_id, scenario.acta())
    services.record_acta(ardian_id, [scenario.booking_reply()])
    services.record_acta(ardian_id, [say("villa-ubud", "A villa in Ubud with a pool.")])
    services.record_acta(rafa_id, [say("rafa-kemang", "Kemang on Saturday.", "rafa")])
    return ardian_id, rafa_id


def search(client, query: str, status: int = 200):
    response = client.get(f"/api/search/{query}")
    assert response.status_code == status, response.content
    return response


def test_hits_of_the_callers_acta_best_first(as_ardian, as_rafa, sessions):
    response = search(as_ardian, "?q=kemang")
    hits = response.json()
    assert [hit["actum"]["chronicum_id"] for hit in hits] == [CHRONICUM, CHRONICUM]
    assert set(hits[0]) == {"actum", "rank", "snippet"}
    assert "«Kemang»" in "".join(hit["snippet"] for hit in hits)
    assert hits[0]["rank"] >= hits[1]["rank"]
    assert "Link" not in response
    (rafas,) = search(as_rafa, "?q=kemang").json()
    assert rafas["actum"]["chronicum_id"] == "rafa-kemang"


def test_filters(as_ardian, sessions):
    assert len(search(as_ardian, "?q=teduh").json()) == 5
    assert len(search(as_ardian, "?q=teduh&actor=ardian").json()) == 1
    assert len(search(as_ardian, "?q=teduh&actor_kind=agent&kind=message").json()) == 3
    assert search(as_ardian, "?q=teduh&chronicum=villa-ubud").json() == []
    assert len(search(as_ardian, "?q=teduh%20or%20pool&chronicum=villa-ubud,x").json()) == 1


def test_link_pages_through_every_hit_once(as_ardian, sessions):
    seen, url = [], "/api/search/?q=teduh&limit=2"
    while url:
        response = as_ardian.get(url)
        assert response.status_code == 200
        seen += [hit["actum"]["id"] for hit in response.json()]
        link = response.get("Link")
        url = LINK.match(link)["url"] if link else None
    assert len(seen) == len(set(seen)) == 5


@override_settings(CHRONICA={"API_MAX_RESPONSE_BYTES": 600})
def test_the_byte_budget_cuts_a_page_and_the_link_goes_on(as_ardian, sessions):
    response = search(as_ardian, "?q=teduh&limit=5")
    hits = response.json()
    assert 1 <= len(hits) < 5
    offset = parse_qs(urlsplit(LINK.match(response["Link"])["url"]).query)["offset"]
    assert offset == [str(len(hits))]


@pytest.mark.parametrize(
    "query",
    [
        "",
        "?q=",
        "?q=%20",
        "?q=-kemang",
        "?q=***",
        "?q=kemang&limit=0",
        "?q=kemang&limit=101",
        "?q=kemang&offset=-1",
        "?q=kemang&kind=speech",
        "?q=kemang&owner=rafa",
        "?q=" + "a" * 1001,
    ],
)
def test_bad_queries_are_400(as_ardian, sessions, query):
    assert "detail" in search(as_ardian, query, 400).json()


def test_hostile_queries_are_words(as_ardian, sessions):
    for query in ['"kemang', "NEAR(kemang)", "content:kemang", "kemang*", "(kemang)"]:
        response = as_ardian.get("/api/search/", {"q": query})
        assert response.status_code == 200, (query, response.content)


def test_an_agent_credential_limited_to_one_chronicum(sessions):
    ardian_id, _ = sessions
    limited = services.issue_credential(ardian_id, "concierge", chronica=["villa-ubud"]).secret
    assert search(agent(limited), "?q=teduh").json() == []
    (hit,) = search(agent(limited), "?q=ubud%20or%20teduh").json()
    assert hit["actum"]["chronicum_id"] == "villa-ubud"
    assert search(agent(limited), f"?q=teduh&chronicum={CHRONICUM}").json() == []
    everywhere = services.issue_credential(ardian_id, "concierge").secret
    assert len(search(agent(everywhere), "?q=teduh").json()) == 5
    assert search(agent(everywhere), "?q=saturday").json() == []


def test_anonymous_is_refused(client, sessions):
    assert client.get("/api/search/?q=kemang").status_code in (401, 403)
