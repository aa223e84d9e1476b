"""``?actor=`` on the window and on the stream: what ardian and booking said."""

from __future__ import annotations

import json

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from chronica import services

from .. import scenario
from .test_api import acta_url, as_ardian, body, dinner, post, window
from .test_follow_stream import STREAM, Stream, basic, opened, owner, server, wire

__all__ = ["as_ardian", "dinner", "server"]  # fixtures


@pytest.fixture
def polls():
    """The stream's project, polling often (``test_follow_stream.fast_polls``, which is
    autouse there and so not imported here)."""
    with override_settings(
        ROOT_URLCONF="tests.follow_urls", CHRONICA={"FOLLOW_POLL_INTERVAL": 0.05}
    ):
        services.reset_chronicarius()
        yield
    services.reset_chronicarius()


@pytest.fixture
def booked(as_ardian, dinner) -> list[dict]:
    """dinner-friday and booking's reply, as the API stored them."""
    response = post(as_ardian, body(scenario.booking_reply()))
    assert response.status_code == 201, response.content
    return [*dinner, response.json()]


def actors(acta: list[dict]) -> list[str]:
    return [a["actor"] for a in acta]


@pytest.mark.django_db
class TestTheWindow:
    def test_repeated_or_comma_separated_mean_the_same(self, as_ardian, booked):
        repeated = window(as_ardian, "?actor=ardian&actor=booking")
        assert repeated == [a for a in booked if a["actor"] in ("ardian", "booking")]
        assert actors(repeated) == ["ardian", "ardian", "booking"]
        assert window(as_ardian, "?actor=ardian,booking") == repeated
        assert window(as_ardian, "?actor=booking&actor=ardian,booking") == repeated

    def test_with_the_other_filters_and_before_the_limit(self, as_ardian, booked):
        got = window(as_ardian, "?actor=search&actor=ardian&kind=message&last_n=2")
        assert [(a["actor"], a["content"]) for a in got] == [
            ("search", "Rumah Teduh and Kayu Manis both have a quiet table for four at 7pm."),
            ("ardian", "Rumah Teduh."),
        ]

    def test_an_unknown_actor_is_an_empty_window(self, as_ardian, booked):
        assert window(as_ardian, "?actor=nobody") == []

    def test_the_pages_follow_the_filter(self, as_ardian, booked):
        first = as_ardian.get(f"{acta_url()}?actor=ardian&actor=booking&last_n=2")
        assert first.status_code == 200
        assert actors(first.json()) == ["ardian", "booking"]
        link = first.headers["Link"]
        assert "actor=ardian" in link
        assert "actor=booking" in link
        older = as_ardian.get(link.split(">", 1)[0].lstrip("<"))
        assert older.status_code == 200
        assert [a["content"] for a in older.json()] == [scenario.SEVEN[0][3]]

    @pytest.mark.parametrize(
        ("query", "said"),
        [
            ("?actor=ard%00ian", "NUL"),
            ("?actor=" + "x" * 256, "longer than 255"),
            ("?actor=", "empty actor ID"),
            ("?actor=ardian,", "empty actor ID"),
        ],
    )
    def test_what_no_actor_can_be_is_a_400(self, as_ardian, booked, query, said):
        response = as_ardian.get(acta_url() + query)
        assert response.status_code == 400
        assert said in response.json()["detail"]

    def test_actors_is_an_unknown_parameter_like_any_other(self, as_ardian, booked):
        response = as_ardian.get(acta_url() + "?actors=ardian")
        assert response.status_code == 400
        assert response.json() == {
            "detail": "unknown query parameter(s): actors (this call takes: actor, actor_kind,"
            " before, compacted, kind, last_n, max_tokens, whole_tool_calls)"
        }

    def test_the_schema_describes_it(self):
        openapi = APIClient().get("/api/schema/?format=json").json()
        parameters = openapi["paths"]["/api/chronica/{chronicum_id}/acta/"]["get"]["parameters"]
        [actor] = [p for p in parameters if p["name"] == "actor"]
        assert actor["in"] == "query"
        assert actor["schema"]["type"] == "array"
        assert actor["explode"] is True
        assert "actor IDs" in actor["description"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.urls("tests.follow_urls")
def test_the_stream_sends_only_those_actors(polls, server, ardian):
    stored = services.record_acta(owner(ardian), scenario.acta())
    stream = opened(server, f"{STREAM}?after={stored[0].id}&actor=booking", **basic("ardian"))
    try:
        reply = services.record_actum(owner(ardian), scenario.booking_reply())
        assert stream.acta(1) == wire([reply])
    finally:
        stream.close()


@pytest.mark.django_db(transaction=True)
@pytest.mark.urls("tests.follow_urls")
def test_the_stream_refuses_what_no_actor_can_be(polls, server, ardian):
    services.record_acta(owner(ardian), scenario.acta())
    stream = Stream(server, STREAM + "?actor=ard%00ian", **basic("ardian"))
    try:
        assert stream.response.status == 400
        assert "NUL" in json.loads(stream.response.read())["detail"]
    finally:
        stream.close()
