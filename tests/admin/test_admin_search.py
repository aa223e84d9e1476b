"""The search box of the acta list: search's index and query language, every owner's
acta (the admin is the operator's), or an actor ID."""

from __future__ import annotations

import pytest
from django.db import connection

from chronica import Actum, services

from .. import scenario
from .test_admin import ACTA, record_dinner, record_rafa_lunch

pytestmark = pytest.mark.django_db


def listed(admin_client, q: str) -> list[str]:
    response = admin_client.get(ACTA, {"q": q})
    assert response.status_code == 200
    return [a.content for a in response.context["cl"].result_list]


@pytest.fixture
def acta():
    record_dinner()
    record_rafa_lunch()
    services.record_acta(
        "ardian",
        [
            Actum(
                chronicum_id="villa-ubud",
                kind="tool_response",
                actor_kind="agent",
                actor="travel",
                content="",
                data={"villa": "Omah Padi"},
            )
        ],
    )


@pytest.mark.parametrize(
    ("q", "contents"),
    [
        ('"rumah teduh" -book -"both have"', [scenario.SEVEN[3][3], "Rumah Teduh."]),
        ("sushi or kemang", [scenario.SEVEN[0][3], scenario.SEVEN[2][3], "Sushi?"]),
        ("omah padi", [""]),
        ("concierge", [scenario.SEVEN[1][3], scenario.SEVEN[6][3]]),
    ],
)
def test_the_search_box_uses_search(admin_client, acta, q, contents):
    assert sorted(listed(admin_client, q)) == sorted(contents)


@pytest.mark.parametrize("q", ['"kemang', "NEAR(kemang)", "kemang*", "content:x", "***", "-x"])
def test_hostile_search_terms_never_fail(admin_client, acta, q):
    listed(admin_client, q)


def test_a_redacted_actum_is_not_found(admin_client, acta):
    assert listed(admin_client, "omah padi") == [""]
    with connection.cursor() as cursor:
        cursor.execute("UPDATE acta SET data = NULL WHERE chronicum_id = 'villa-ubud'")
    assert listed(admin_client, "omah padi") == []
