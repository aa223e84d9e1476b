"""The window's parameters are declared once (``chronica.validation.PARAMETERS``): the
services' keyword arguments, the API's query parameters and their OpenAPI description,
and the commands' flags are all that one table, so a new filter cannot be forgotten in
one of them (issue 25: a filter left out of the API's paging was dropped silently)."""

from __future__ import annotations

import inspect
from argparse import ArgumentParser

import pytest
from rest_framework.test import APIClient

from chronica import services
from chronica.management.commands import chronica_follow, chronica_show
from chronica.services import Chronicarius
from chronica.validation import FOLLOW_PARAMETERS, PARAMETERS, WINDOW_PARAMETERS

from ..api.test_api import acta_url, as_ardian, dinner

__all__ = ["as_ardian", "dinner"]  # fixtures

# A value of each parameter that the services take, as the query string spells it.
GIVEN = {
    "kind": "message,thought",
    "actor_kind": "human",
    "actor": "ardian",
    "last_n": "2",
    "max_tokens": "500",
    "whole_tool_calls": "true",
    "compacted": "true",
    "before": None,  # the ID of an actum of the chronicum
    "after": None,
}


def keywords(function) -> dict[str, inspect.Parameter]:
    return {
        name: p
        for name, p in inspect.signature(function).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }


@pytest.mark.parametrize(
    ("function", "declared"),
    [
        (Chronicarius.get_acta, WINDOW_PARAMETERS),
        (Chronicarius.aget_acta, WINDOW_PARAMETERS),
        (Chronicarius.get_acta_page, WINDOW_PARAMETERS),
        (services.get_acta, WINDOW_PARAMETERS),
        (services.aget_acta, WINDOW_PARAMETERS),
        (services.get_acta_page, WINDOW_PARAMETERS),
        (Chronicarius.afollow, FOLLOW_PARAMETERS),
        (services.afollow, FOLLOW_PARAMETERS),
    ],
    ids=lambda v: getattr(v, "__qualname__", None) or "",
)
def test_every_parameter_is_an_explicit_typed_keyword_of_the_services(function, declared):
    found = keywords(function)
    arguments = [p.argument for p in declared]
    # A page and a follow also take a byte budget (the API passes
    # CHRONICA["API_MAX_RESPONSE_BYTES"]) and raw_data (the API writes data as stored):
    # no parameters of the query string.
    budgeted = function.__name__.endswith("_page") or function.__name__ == "afollow"
    page_only = {"max_bytes", "raw_data"} if budgeted else set()
    assert set(found) - page_only == set(arguments)
    for name in arguments:
        assert found[name].annotation is not inspect.Parameter.empty, name
        assert found[name].default is not inspect.Parameter.empty, name


def test_names_are_unique_and_spelt_for_a_query_string():
    names = [p.name for p in PARAMETERS]
    assert len(names) == len(set(names))
    assert all(name.isidentifier() and name.islower() for name in names)


def test_the_api_schema_describes_each_parameter_of_the_window_and_the_stream():
    openapi = APIClient().get("/api/schema/?format=json").json()
    for path, declared in (
        ("/api/chronica/{chronicum_id}/acta/", WINDOW_PARAMETERS),
        ("/api/chronica/{chronicum_id}/acta/stream/", FOLLOW_PARAMETERS),
    ):
        described = [
            p["name"] for p in openapi["paths"][path]["get"]["parameters"] if p["in"] == "query"
        ]
        assert sorted(described) == sorted(p.name for p in declared), path


@pytest.mark.django_db
def test_each_parameter_the_window_is_given_reaches_the_services(as_ardian, dinner, monkeypatch):
    received = []
    page = Chronicarius.get_acta_page

    def spy(self, owner_id, chronicum_id, **window):
        received.append(window)
        return page(self, owner_id, chronicum_id, **window)

    monkeypatch.setattr(Chronicarius, "get_acta_page", spy)
    for parameter in WINDOW_PARAMETERS:
        value = GIVEN[parameter.name] or dinner[-1]["id"]
        response = as_ardian.get(f"{acta_url()}?{parameter.name}={value}")
        assert response.status_code == 200, (parameter.name, response.content)
        window = received.pop()
        assert parameter.argument in window, parameter.name


@pytest.mark.parametrize(
    ("command", "declared"),
    [(chronica_show.Command, WINDOW_PARAMETERS), (chronica_follow.Command, FOLLOW_PARAMETERS)],
    ids=["chronica_show", "chronica_follow"],
)
def test_the_commands_offer_each_parameter_they_declare(command, declared):
    parser = ArgumentParser()
    command().add_arguments(parser)
    flags = {option for action in parser._actions for option in action.option_strings}
    offered = {f"--{p.name.replace('_', '-')}" for p in declared if p.command}
    assert offered <= flags
    options = {p.name: [GIVEN[p.name]] if p.repeatable else 1 for p in declared if p.command}
    given = chronica_show.window_arguments(options, declared)
    assert set(given) == {p.argument for p in declared if p.command}
