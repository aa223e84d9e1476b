"""``manage.py chronica_search --owner OWNER QUERY``: an operator finds what was said."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import override_settings

from chronica import services

from .. import scenario
from ..scenario import CHRONICUM, OWNER


@pytest.fixture
def dinner():
    services.record_acta(OWNER, scenario.acta())
    services.record_acta(OWNER, [scenario.booking_reply()])
    services.record_acta("rafa", [scenario.booking_reply("Rafa's own RT-4821.", "rafa-s")])


def search(*args: str) -> list[str]:
    out = StringIO()
    call_command("chronica_search", *args, stdout=out, stderr=StringIO())
    return out.getvalue().splitlines()


@pytest.mark.django_db
def test_hits_best_first_with_their_snippets(dinner):
    lines = search("--owner", OWNER, "RT-4821")
    assert len(lines) == 2
    assert CHRONICUM in lines[0]
    assert "«RT" in lines[1]


@pytest.mark.django_db
def test_json_and_filters(dinner):
    lines = search("--owner", OWNER, "--json", "--actor", "ardian", "teduh")
    (hit,) = [json.loads(line) for line in lines]
    assert hit["actum"]["actor"] == "ardian"
    assert set(hit) == {"actum", "rank", "snippet"}
    assert search("--owner", OWNER, "--json", "--chronicum", "rafa-s", "RT-4821") == []
    assert len(search("--owner", OWNER, "--json", "--kind", "message", "teduh")) == 4


@pytest.mark.django_db
@pytest.mark.parametrize("args", [("--owner", OWNER, ""), ("kemang",), ("--owner", OWNER)])
def test_bad_calls_are_command_errors(args):
    with pytest.raises(CommandError):
        search(*args)


@pytest.mark.django_db(transaction=True)
@override_settings(CHRONICA={"SEARCH_CONFIG": "english"})
def test_build_index_for_another_configuration(dinner):
    if connection.vendor != "postgresql":
        with pytest.raises(CommandError, match="PostgreSQL"):
            search("--build-index")
        return
    try:
        assert "english" in search("--build-index")[0]
        with connection.cursor() as cursor:
            cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'acta_search'")
            assert "'english'::regconfig" in cursor.fetchone()[0]
        # english stems: "booking" finds "Book"
        assert services.search_acta(OWNER, "booking")
    finally:
        with override_settings(CHRONICA={"SEARCH_CONFIG": "simple"}):
            search("--build-index")
