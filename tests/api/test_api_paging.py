"""Paging back through a long session over HTTP: a thousand dinners' worth of acta,
read page by page through the ``Link`` header, every actum exactly once.

Each answer holds at most ``CHRONICA["API_MAX_ACTA"]`` acta (100 here, 1000 by
default); ``last_n`` and ``max_tokens`` cut a page too, and the next link
continues backwards from the oldest actum of the page.
"""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from chronica import Actum, ActumKind, services

from .. import scenario
from ..scenario import CHRONICUM
from .test_api import acta_url, as_ardian, as_rafa, body, post, window

__all__ = ["as_ardian", "as_rafa"]  # fixtures

LONG = 5000
PAGE = 100
LINK = re.compile(r'^<(?P<url>[^>]+)>; rel="next"$')


def words(actum: Actum) -> int:
    """The token counter of these tests: one token a word, one for the frame."""
    return 1 + len(actum.content.split())


SETTINGS = {"API_MAX_ACTA": PAGE, "TOKEN_COUNTER": f"{__name__}.words"}


def turn(n: int) -> list[Actum]:
    """One turn of a long dinner-planning session: five acta, one a tool call."""
    call = f"search-{n}"

    def actum(kind, actor_kind, actor, content, call_id=""):
        return Actum(
            chronicum_id=CHRONICUM,
            kind=kind,
            actor_kind=actor_kind,
            actor=actor,
            content=content,
            call_id=call_id,
        )

    return [
        actum("message", "human", "ardian", f"Turn {n}: a quiet table for {n % 7 + 2}?"),
        actum("thought", "agent", "concierge", "Search first." + " then book" * (n % 5)),
        actum("tool_request", "agent", "search", f'{{"party": {n % 7 + 2}}}', call),
        actum("tool_response", "agent", "search", "Rumah Teduh has one. " * (n % 3 + 1), call),
        actum("message", "agent", "concierge", f"Rumah Teduh, turn {n}."),
    ]


@pytest.fixture
def long_session(ardian):
    """ardian's dinner-friday with 5,000 acta, recorded 500 at a time; as stored."""
    stored: list[Actum] = []
    with override_settings(CHRONICA=SETTINGS):
        for first in range(0, LONG // 5, 100):
            batch = [a for n in range(first, first + 100) for a in turn(n)]
            stored += services.record_acta(str(ardian.pk), batch)
    return stored


def walk(client: APIClient, url: str) -> list[list[dict]]:
    """Every page from ``url`` on, following ``Link: <...>; rel="next"`` to the end."""
    pages = []
    while url:
        response = client.get(url)
        assert response.status_code == 200, response.content
        pages.append(response.json())
        link = response.headers.get("Link")
        url = LINK.fullmatch(link)["url"] if link else None
        assert len(pages) <= LONG + 1, "the links go round in a circle"
    return pages


def oldest_first(pages: list[list[dict]]) -> list[str]:
    """The IDs of pages walked backwards, back in write order."""
    return [actum["id"] for page in reversed(pages) for actum in page]


def ids(acta) -> list[str]:
    return [actum.id for actum in acta]


@pytest.mark.django_db
class TestWalkingBack:
    def test_every_actum_once_in_order(self, as_ardian, long_session):
        with override_settings(CHRONICA=SETTINGS):
            pages = walk(as_ardian, acta_url())
        assert [len(page) for page in pages] == [PAGE] * (LONG // PAGE)
        assert oldest_first(pages) == ids(long_session)
        assert pages[-1][0]["content"] == "Turn 0: a quiet table for 2?"

    @pytest.mark.parametrize(
        ("query", "keep"),
        [
            ("?kind=message", lambda a: a.kind is ActumKind.MESSAGE),
            ("?kind=message&actor_kind=human", lambda a: a.actor == "ardian"),
            ("?kind=tool_request,tool_response", lambda a: bool(a.call_id)),
            ("?actor_kind=agent&kind=thought&kind=message", lambda a: a.actor == "concierge"),
        ],
    )
    def test_with_filters(self, as_ardian, long_session, query, keep):
        with override_settings(CHRONICA=SETTINGS):
            pages = walk(as_ardian, acta_url() + query)
        expected = [a for a in long_session if keep(a)]
        assert oldest_first(pages) == ids(expected)
        assert all(len(page) == PAGE for page in pages[:-1])

    @pytest.mark.parametrize("last_n", [37, PAGE, 500])
    def test_last_n_is_the_page_size(self, as_ardian, long_session, last_n):
        with override_settings(CHRONICA=SETTINGS):
            pages = walk(as_ardian, f"{acta_url()}?kind=message&last_n={last_n}")
        size = min(last_n, PAGE)
        assert {len(page) for page in pages[:-1]} == {size}
        assert 1 <= len(pages[-1]) <= size
        messages = [a for a in long_session if a.kind is ActumKind.MESSAGE]
        assert oldest_first(pages) == ids(messages)

    @pytest.mark.parametrize("max_tokens", [150, 1000])
    def test_with_a_token_budget(self, as_ardian, long_session, max_tokens):
        with override_settings(CHRONICA=SETTINGS):
            pages = walk(as_ardian, f"{acta_url()}?max_tokens={max_tokens}")
        assert oldest_first(pages) == ids(long_session)
        by_id = {actum.id: actum for actum in long_session}
        for page in pages:
            spent = sum(words(by_id[a["id"]]) for a in page)
            assert 0 < spent <= max_tokens
            assert len(page) <= PAGE
        if max_tokens == 150:
            # The budget, not the cap, cut these pages.
            assert max(len(page) for page in pages) < PAGE

    def test_with_whole_tool_calls(self, as_ardian, long_session):
        # 99 does not divide a turn of five: some pages begin with a tool response
        # whose request is on the older page.
        with override_settings(CHRONICA=SETTINGS):
            pages = walk(as_ardian, f"{acta_url()}?last_n=99&whole_tool_calls=true")
            plain = walk(as_ardian, f"{acta_url()}?last_n=99")
        assert len(pages) == len(plain)
        left_out = 0
        for page, whole in zip(pages, plain, strict=True):
            requests = {a["call_id"] for a in whole if a["kind"] == "tool_request"}
            expected = [
                a for a in whole if a["kind"] != "tool_response" or a["call_id"] in requests
            ]
            assert page == expected
            left_out += len(whole) - len(page)
        assert left_out > 0
        assert oldest_first(plain) == ids(long_session)

    def test_the_default_cap_is_1000(self, as_ardian, long_session):
        pages = walk(as_ardian, acta_url())
        assert [len(page) for page in pages] == [1000] * (LONG // 1000)
        assert oldest_first(pages) == ids(long_session)


@pytest.mark.django_db
class TestTheLink:
    def test_none_when_the_window_is_whole(self, as_ardian):
        for actum in scenario.acta():
            post(as_ardian, body(actum))
        for query in ("", "?last_n=7", "?kind=message&last_n=5", "?max_tokens=100000"):
            response = as_ardian.get(acta_url() + query)
            assert "Link" not in response.headers, query

    def test_the_same_query_before_the_oldest_actum(self, as_ardian):
        dinner = [post(as_ardian, body(actum)).json() for actum in scenario.acta()]
        response = as_ardian.get(f"{acta_url()}?kind=message&kind=thought&last_n=2&format=json")
        assert [a["id"] for a in response.json()] == [dinner[5]["id"], dinner[6]["id"]]
        url = LINK.fullmatch(response.headers["Link"])["url"]
        parts = urlsplit(url)
        assert (parts.scheme, parts.netloc, parts.path) == ("http", "testserver", acta_url())
        assert parse_qs(parts.query) == {
            "kind": ["message", "thought"],
            "last_n": ["2"],
            "format": ["json"],
            "before": [dinner[5]["id"]],
        }
        assert [a["id"] for a in as_ardian.get(url).json()] == [dinner[1]["id"], dinner[4]["id"]]

    def test_one_at_a_time(self, as_ardian):
        dinner = [post(as_ardian, body(actum)).json() for actum in scenario.acta()]
        pages = walk(as_ardian, acta_url() + "?last_n=1")
        assert [len(page) for page in pages] == [1] * 7
        assert oldest_first(pages) == [a["id"] for a in dinner]

    def test_the_spelling_without_the_slash_is_kept(self, as_ardian):
        for actum in scenario.acta():
            post(as_ardian, body(actum))
        response = as_ardian.get(acta_url().rstrip("/") + "?last_n=3")
        url = LINK.fullmatch(response.headers["Link"])["url"]
        assert urlsplit(url).path == acta_url().rstrip("/")
        assert len(as_ardian.get(url).json()) == 3

    def test_an_id_with_odd_characters_is_escaped(self, as_ardian):
        chronicum_id = 'dinner <friday>; rel="x", 7pm'
        for actum in scenario.acta(chronicum_id):
            post(as_ardian, body(actum), chronicum_id=chronicum_id)
        response = as_ardian.get(acta_url(chronicum_id) + "?last_n=3")
        url = LINK.fullmatch(response.headers["Link"])["url"]
        assert len(as_ardian.get(url).json()) == 3

    def test_an_actum_over_the_budget_ends_the_walk(self, as_ardian):
        with override_settings(CHRONICA=SETTINGS):
            for content in ("Rumah Teduh?", "word " * 50, "Yes, at 7pm.", "Booked."):
                post(as_ardian, {**body(scenario.booking_reply()), "content": content})
            pages = walk(as_ardian, f"{acta_url()}?max_tokens=10")
        assert [[a["content"] for a in page] for page in pages] == [
            ["Yes, at 7pm.", "Booked."],
            [],
        ]


@pytest.mark.django_db
class TestWindowQuery:
    @pytest.fixture
    def dinner(self, as_ardian):
        return [post(as_ardian, body(actum)).json() for actum in scenario.acta()]

    @pytest.mark.parametrize(
        ("query", "said"),
        [
            ("?max_tokens=-1", "max_tokens must be 0 or more, not -1"),
            ("?max_tokens=many", "max_tokens must be a 64-bit integer"),
            ("?max_tokens=", "max_tokens must be a 64-bit integer"),
            ("?max_tokens=1e3", "max_tokens must be a 64-bit integer"),
            ("?whole_tool_calls=yes", "whole_tool_calls must be true or false, not 'yes'"),
            ("?whole_tool_calls=True", "whole_tool_calls must be true or false"),
            ("?whole_tool_calls=", "whole_tool_calls must be true or false"),
            ("?before=never-recorded", "before='never-recorded' is not an actum of this"),
            ("?before=", "before='' is not an actum of this chronicum"),
        ],
    )
    def test_a_bad_value_is_a_400(self, as_ardian, dinner, query, said):
        response = as_ardian.get(acta_url() + query)
        assert response.status_code == 400, response.content
        assert said in response.json()["detail"]

    def test_before_an_actum_of_another_chronicum_is_a_400(self, as_ardian, as_rafa, dinner):
        rafas = post(as_rafa, body(scenario.booking_reply()), chronicum_id="rafa-lunch").json()
        response = as_ardian.get(f"{acta_url()}?before={rafas['id']}")
        assert response.status_code == 400
        # And rafa cannot page through ardian's with one of ardian's IDs.
        response = as_rafa.get(f"{acta_url()}?before={dinner[3]['id']}")
        assert response.status_code == 404

    def test_before(self, as_ardian, dinner):
        assert window(as_ardian, f"?before={dinner[3]['id']}") == dinner[:3]
        assert window(as_ardian, f"?before={dinner[0]['id']}") == []

    def test_max_tokens_zero_is_nothing(self, as_ardian, dinner):
        response = as_ardian.get(acta_url() + "?max_tokens=0")
        assert (response.status_code, response.json()) == (200, [])
        assert "Link" not in response.headers

    def test_the_largest_budget_is_all(self, as_ardian, dinner):
        assert window(as_ardian, "?max_tokens=9223372036854775807") == dinner

    @pytest.mark.parametrize("value", ["true", "false"])
    def test_whole_tool_calls_as_the_services_cut_it(self, ardian, as_ardian, value):
        reply = {"actor_kind": "agent", "actor": "booking", "content": "held"}
        post(as_ardian, {**reply, "kind": "tool_request", "call_id": "book-1"})
        post(as_ardian, {**reply, "kind": "tool_response", "call_id": "book-1"})
        post(as_ardian, {**reply, "kind": "message", "content": "Booked."})
        whole = value == "true"
        expected = services.get_acta(str(ardian.pk), CHRONICUM, last_n=2, whole_tool_calls=whole)
        got = window(as_ardian, f"?last_n=2&whole_tool_calls={value}")
        assert [a["id"] for a in got] == ids(expected)
        assert len(got) == (1 if whole else 2)


def walk_bodies(client: APIClient, url: str, **headers: str) -> list[bytes]:
    """``walk``, keeping each page's body as sent."""
    bodies = []
    while url:
        response = client.get(url, **headers)
        assert response.status_code == 200, response.content
        bodies.append(response.content)
        link = response.headers.get("Link")
        url = LINK.fullmatch(link)["url"] if link else None
    return bodies


def fits(pages: list[list[dict]], budget: int) -> None:
    """Each page's JSON is at most ``budget`` bytes, and would pass it with the next
    older actum (the first of the page before it in the walk)."""
    for page, older in zip(pages, [*pages[1:], []], strict=True):
        assert len(compact(page)) <= budget or len(page) == 1
        if older:
            assert len(compact([older[-1], *page])) > budget


def compact(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


@pytest.mark.django_db
class TestByteBudget:
    """CHRONICA["API_MAX_RESPONSE_BYTES"] cuts a page early, counting the bytes of the
    JSON answer; the link leads to the rest."""

    def test_a_heavy_window_is_cut_and_linked(self, as_ardian, ardian):
        heavy = [
            Actum(
                chronicum_id=CHRONICUM,
                kind="tool_response",
                actor_kind="agent",
                actor="search",
                content=f"result {n}",
                data="x" * 898,  # 900 bytes of JSON, however the database spells it
            )
            for n in range(12)
        ]
        stored = services.record_acta(str(ardian.pk), heavy)
        with override_settings(CHRONICA={"API_MAX_RESPONSE_BYTES": 3000}):
            bodies = walk_bodies(as_ardian, acta_url() + "?last_n=10")
        pages = [json.loads(b) for b in bodies]

        # About 1,170 bytes an actum with its other fields: two a page.
        assert [len(page) for page in pages] == [2, 2, 2, 2, 2, 2]
        assert all(len(b) <= 3000 for b in bodies)
        assert [compact(page) for page in pages] == bodies
        fits(pages, 3000)
        assert oldest_first(pages) == ids(stored)

    def test_huge_data_is_cut_and_the_rest_reachable(self, as_ardian, ardian):
        # The attack of issue 20: data of many tiny containers, whole pages of them.
        huge = [
            Actum(
                chronicum_id=CHRONICUM,
                kind="tool_response",
                actor_kind="agent",
                actor="search",
                content="",
                data=[[]] * 15_000 + [{"n": n, "é": [1.0, 1e100, None, "a, b: c"]}],
            )
            for n in range(9)
        ]
        stored = services.record_acta(str(ardian.pk), huge)
        with override_settings(CHRONICA={"API_MAX_RESPONSE_BYTES": 100_000}):
            bodies = walk_bodies(as_ardian, acta_url())
        pages = [json.loads(b) for b in bodies]

        assert [len(page) for page in pages] == [2, 2, 2, 2, 1]
        assert all(len(b) <= 100_000 for b in bodies)
        fits(pages, 100_000)
        assert oldest_first(pages) == ids(stored)
        assert [a["data"] for page in reversed(pages) for a in page] == [a.data for a in huge]

    def test_the_browsable_api_is_cut_the_same(self, as_ardian, ardian):
        stored = services.record_acta(
            str(ardian.pk), [_message("x" * 500, data=[[]] * 300) for _ in range(5)]
        )
        with override_settings(CHRONICA={"API_MAX_RESPONSE_BYTES": 4000}):
            json_pages = [json.loads(b) for b in walk_bodies(as_ardian, acta_url())]
            html = walk_bodies(as_ardian, acta_url(), HTTP_ACCEPT="text/html")

        assert [len(page) for page in json_pages] == [2, 2, 1]
        assert len(html) == 3
        assert all(b"rel=&quot;next&quot;" in page for page in html[:2])
        assert oldest_first(json_pages) == ids(stored)

    def test_the_newest_actum_comes_whatever_its_size(self, as_ardian, ardian):
        stored = services.record_acta(
            str(ardian.pk),
            [_message("x" * 500) for _ in range(3)],
        )
        with override_settings(CHRONICA={"API_MAX_RESPONSE_BYTES": 10}):
            pages = walk(as_ardian, acta_url())

        assert [len(page) for page in pages] == [1, 1, 1]
        assert oldest_first(pages) == ids(stored)

    def test_with_a_token_budget(self, as_ardian, ardian):
        stored = services.record_acta(
            str(ardian.pk),
            [_message("y" * 100) for _ in range(6)],
        )
        with override_settings(CHRONICA={"API_MAX_RESPONSE_BYTES": 800}):
            pages = walk(as_ardian, acta_url() + "?max_tokens=100000")

        # About 360 bytes an actum: two a page.
        assert [len(page) for page in pages] == [2, 2, 2]
        fits(pages, 800)
        assert oldest_first(pages) == ids(stored)


def _message(content: str, data: object = None) -> Actum:
    return Actum(
        chronicum_id=CHRONICUM,
        kind="message",
        actor_kind="human",
        actor="ardian",
        content=content,
        data=data,
    )
