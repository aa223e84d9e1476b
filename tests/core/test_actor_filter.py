"""The actor filter: "what did ardian and booking say", on the window, a page of it, its
async twin and a follow, on the in-memory store and on DjangoStore (issue 25: the
filter that proves the window is declared once)."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.db import connections

from chronica import InvalidQuery, services
from chronica.services import Chronicarius
from chronica.validation import build_query

from .. import scenario
from ..scenario import CHRONICUM, OWNER
from .test_chronicarius import record_dinner


def said(acta) -> list[tuple[str, str]]:
    return [(a.actor, a.content) for a in acta]


def by(actors, acta=None) -> list[tuple[str, str]]:
    acta = acta if acta is not None else [*scenario.acta(), scenario.booking_reply()]
    return said(a for a in acta if a.actor in actors)


@pytest.fixture
def dinner(chronicarius):
    acta = record_dinner(chronicarius)
    acta.append(chronicarius.record_actum(OWNER, scenario.booking_reply()))
    return acta


def test_what_ardian_and_booking_said(chronicarius, dinner):
    window = chronicarius.get_acta(OWNER, CHRONICUM, actors=["ardian", "booking"])
    assert said(window) == by({"ardian", "booking"})
    assert said(chronicarius.get_acta(OWNER, CHRONICUM, actors="booking")) == by({"booking"})


def test_with_the_other_filters_and_before_the_limit(chronicarius, dinner):
    window = chronicarius.get_acta(
        OWNER, CHRONICUM, actors=("search", "ardian"), kinds="message", last_n=2
    )
    assert said(window) == [
        ("search", "Rumah Teduh and Kayu Manis both have a quiet table for four at 7pm."),
        ("ardian", "Rumah Teduh."),
    ]
    window = chronicarius.get_acta(OWNER, CHRONICUM, actors={"search"}, actor_kinds="human")
    assert window == []


def test_actor_ids_match_exactly(chronicarius, dinner):
    for other in ("Ardian", "ardia", "ardian ", "nobody"):
        assert chronicarius.get_acta(OWNER, CHRONICUM, actors=[other]) == [], other
    assert chronicarius.get_acta(OWNER, CHRONICUM, actors=[]) == dinner, "empty: no filter"


def test_a_page_and_its_next_cursor_follow_the_filter(chronicarius, dinner):
    page = chronicarius.get_acta_page(OWNER, CHRONICUM, actors=["ardian", "booking"], last_n=2)
    assert said(page.acta) == by({"ardian", "booking"})[-2:]
    older = chronicarius.get_acta_page(
        OWNER, CHRONICUM, actors=["ardian", "booking"], last_n=2, before=page.next_before
    )
    assert said(older.acta) == by({"ardian", "booking"})[:1]
    assert older.next_before is None


async def test_the_async_twin(chronicarius, dinner):
    window = await chronicarius.aget_acta(OWNER, CHRONICUM, actors=["booking", "concierge"])
    assert said(window) == by({"booking", "concierge"})
    await sync_to_async(connections.close_all)()


async def test_a_follow_sees_only_those_actors(chronicarius):
    stored = await chronicarius.arecord_acta(OWNER, scenario.acta())
    follower = chronicarius.afollow(OWNER, CHRONICUM, after=stored[0].id, actors=["ardian"])
    got = []
    try:
        async with asyncio.timeout(60):
            async for actum in follower:
                got.append(actum)
                break
    finally:
        await follower.aclose()
        await sync_to_async(connections.close_all)()
    assert said(got) == [("ardian", "Rumah Teduh.")]


@pytest.mark.parametrize(
    "actors",
    [
        [1],
        [None],
        ["x" * 256],
        ["ard\x00ian"],
        ["ard\nian"],
        ["\ud800"],
        b"ardian",
        [""],
        "",
        ["ardian", ""],
    ],
    ids=[
        "int",
        "none",
        "too-long",
        "nul",
        "newline",
        "surrogate",
        "bytes",
        "empty",
        "empty-str",
        "one-empty",
    ],
)
def test_what_no_actor_can_be_is_invalid_query(chronicarius, dinner, actors):
    with pytest.raises(InvalidQuery, match="actor"):
        chronicarius.get_acta(OWNER, CHRONICUM, actors=actors)
    with pytest.raises(InvalidQuery, match="actor"):
        chronicarius.afollow(OWNER, CHRONICUM, actors=actors).start()


def test_the_query_carries_the_actors():
    assert build_query(actors="ardian").actors == frozenset({"ardian"})
    assert build_query(actors=("ardian", "booking", "ardian")).actors == {"ardian", "booking"}
    assert build_query().actors == frozenset()


def test_the_same_arguments_in_any_iterable_make_the_same_query_and_bad_ones_are_refused():
    """Arguments equal to good ones but of another type (True for 1) are refused, however
    often the good ones came first."""
    first = build_query(kinds=["message"], actors=["ardian"], last_n=1)
    assert build_query(kinds=["message"], actors=["ardian"], last_n=1) == first
    assert build_query(kinds=("message",), actors="ardian", last_n=1) == first
    assert first == build_query(kinds={"message"}, actors=iter(["ardian"]), last_n=1)
    for bad in (
        {"last_n": True},
        {"last_n": 1.0},
        {"last_n": 1, "max_tokens": 2.0},
        {"last_n": 1, "kinds": ["bogus"]},
        {"last_n": 1, "actors": [""]},
        {"last_n": 1, "actors": [1]},
        {"last_n": 1, "before": 7},
    ):
        for _ in range(2):
            with pytest.raises(InvalidQuery):
                build_query(**bad)
    with pytest.raises(TypeError, match="unexpected keyword"):
        build_query(kind=["message"])


@pytest.mark.django_db
def test_the_module_functions_take_it():
    record_dinner(services.get_chronicarius())
    assert said(services.get_acta(OWNER, CHRONICUM, actors=["concierge"])) == by(
        {"concierge"}, scenario.acta()
    )


def test_a_chronicarius_on_a_plain_store_cuts_it_in_python(dinner_plain):
    chronicarius, _acta = dinner_plain
    window = chronicarius.get_acta(OWNER, CHRONICUM, actors=["ardian"], max_tokens=10_000)
    assert said(window) == by({"ardian"})


@pytest.fixture
def dinner_plain():
    from ..teststores import PlainStore

    chronicarius = Chronicarius(PlainStore())
    acta = record_dinner(chronicarius)
    acta.append(chronicarius.record_actum(OWNER, scenario.booking_reply()))
    return chronicarius, acta
