"""The OpenAPI schema of chronica.api, and schemathesis driving requests generated from it.

Generated requests, valid and invalid, must never get a 5xx, and every answer
must be one the schema describes (status, content type, headers, body).
"""

from __future__ import annotations

import base64
import os

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from .. import scenario
from ..scenario import CHRONICUM
from .test_api import BOOKING_KEY, body

SCHEMA_URL = "/api/schema/?format=json"
OPERATIONS = [
    ("/api/chronica/", "GET"),
    ("/api/chronica/", "POST"),
    ("/api/chronica/{chronicum_id}/", "GET"),
    ("/api/chronica/{chronicum_id}/", "DELETE"),
    ("/api/chronica/{chronicum_id}/acta/", "GET"),
    ("/api/chronica/{chronicum_id}/acta/", "POST"),
    ("/api/chronica/{chronicum_id}/acta/pop/", "POST"),
    ("/api/chronica/{chronicum_id}/state/", "GET"),
    ("/api/chronica/{chronicum_id}/state/", "POST"),
    ("/api/search/", "GET"),
    ("/api/chronica/{chronicum_id}/fork/", "POST"),
    ("/api/chronica/{chronicum_id}/compactions/", "POST"),
]
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
]
# Small on purpose: the whole file stays well under a minute on two cores.
# CHRONICA_SCHEMA_EXAMPLES=1000 searches harder, by hand.
EXAMPLES_PER_OPERATION = int(os.environ.get("CHRONICA_SCHEMA_EXAMPLES", "75"))
# The same examples on every run, as every property test draws (tests/conftest.py;
# CHRONICA_HYPOTHESIS=random draws new ones, to search by hand with the one above).


def basic(username: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


@pytest.fixture
def openapi() -> dict:
    response = APIClient().get(SCHEMA_URL)
    assert response.status_code == 200
    return response.json()


class TestSchema:
    def test_every_row_of_the_api_table_is_described(self, openapi):
        paths = openapi["paths"]
        # Each route once: neither its spelling without the slash nor its older names.
        assert {p for p in paths if p.startswith("/api/chronica/")} == {
            "/api/chronica/",
            "/api/chronica/{chronicum_id}/",
            "/api/chronica/{chronicum_id}/acta/",
            "/api/chronica/{chronicum_id}/acta/stream/",
            "/api/chronica/{chronicum_id}/acta/pop/",
            "/api/chronica/{chronicum_id}/acta/{actum_id}/redact/",
            "/api/chronica/{chronicum_id}/state/",
            "/api/chronica/{chronicum_id}/fork/",
            "/api/chronica/{chronicum_id}/compactions/",
        }
        for path in {path for path, _ in OPERATIONS}:
            assert set(paths[path]) == {m.lower() for p, m in OPERATIONS if p == path}
        common = {"401", "403", "503"}
        answers = {
            ("/api/chronica/", "get"): {"200", "400", "501"},
            ("/api/chronica/", "post"): {"201", "400", "409", "411", "413"},
            ("/api/chronica/{chronicum_id}/", "get"): {"200", "400", "404"},
            ("/api/chronica/{chronicum_id}/", "delete"): {"204", "400", "404", "501"},
            ("/api/chronica/{chronicum_id}/acta/", "get"): {"200", "400", "404"},
            ("/api/chronica/{chronicum_id}/acta/", "post"): {
                *("200", "201", "400", "404", "411", "413", "501"),
            },
            ("/api/chronica/{chronicum_id}/acta/pop/", "post"): {
                *("200", "204", "400", "404", "501"),
            },
            ("/api/chronica/{chronicum_id}/state/", "get"): {"200", "400", "404", "501"},
            ("/api/search/", "get"): {"200", "400", "501"},
            ("/api/chronica/{chronicum_id}/state/", "post"): {
                *("204", "400", "404", "409", "411", "413", "501"),
            },
            ("/api/chronica/{chronicum_id}/fork/", "post"): {
                *("201", "400", "404", "409", "411", "413", "501"),
            },
            ("/api/chronica/{chronicum_id}/compactions/", "post"): {
                *("200", "201", "400", "404", "411", "413", "501"),
            },
        }
        for (path, method), statuses in answers.items():
            assert set(paths[path][method]["responses"]) == statuses | common, (path, method)
            unavailable = paths[path][method]["responses"]["503"]
            assert "Retry-After" in unavailable["headers"]
        post = paths["/api/chronica/{chronicum_id}/acta/"]["post"]
        assert "Idempotent-Replayed" in post["responses"]["200"]["headers"]
        assert [p["name"] for p in post["parameters"] if p["in"] == "header"] == ["Idempotency-Key"]
        window = paths["/api/chronica/{chronicum_id}/acta/"]["get"]
        assert {p["name"] for p in window["parameters"]} == {
            *("chronicum_id", "kind", "actor_kind", "actor", "last_n"),
            *("max_tokens", "whole_tool_calls", "before", "compacted"),
        }
        assert "Link" in window["responses"]["200"]["headers"]
        listing = paths["/api/chronica/"]["get"]
        assert {p["name"] for p in listing["parameters"]} == {"limit", "cursor"}
        page = listing["responses"]["200"]["content"]["application/json"]["schema"]
        assert page == {"$ref": "#/components/schemas/ChronicumPage"}
        found = paths["/api/search/"]["get"]
        assert {p["name"] for p in found["parameters"]} == {
            *("q", "chronicum", "kind", "actor_kind", "actor", "limit", "offset"),
        }
        assert "Link" in found["responses"]["200"]["headers"]
        created = paths["/api/chronica/"]["post"]["responses"]["201"]
        assert "Location" in created["headers"]

    def test_no_anonymous_access_is_advertised(self, openapi):
        for path, method in OPERATIONS:
            assert {} not in openapi["paths"][path][method.lower()]["security"]

    def test_an_agents_bearer_credential_is_advertised(self, openapi):
        scheme = openapi["components"]["securitySchemes"]["agentCredential"]
        assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
        for path, method in OPERATIONS:
            assert {"agentCredential": []} in openapi["paths"][path][method.lower()]["security"]

    def test_descriptions_are_markdown_not_python_docstrings(self, openapi):
        def texts(node):
            if isinstance(node, dict):
                for key, value in node.items():
                    if key in ("description", "summary") and isinstance(value, str):
                        yield value
                    yield from texts(value)
            elif isinstance(node, list):
                for value in node:
                    yield from texts(value)

        chronicas = {"paths": openapi["paths"], "components": openapi["components"]}
        found = list(texts(chronicas))
        assert len(found) > 20
        for text in found:
            assert "``" not in text
            assert ":class:" not in text
            assert ":meth:" not in text

    def test_the_components_are_chronicas_names(self, openapi):
        schemas = openapi["components"]["schemas"]
        assert {
            "Actum",
            "ActumWrite",
            "Chronicum",
            "ChronicaError",
            "ActumKind",
            "ActorKind",
            "ActumOrBatch",
            "Recorded",
        } <= set(schemas)
        assert {"call_id", "data", "recorded_by"} <= set(schemas["Actum"]["required"])
        assert schemas["Actum"]["properties"]["data"]["nullable"] is True
        recorded_by = schemas["Actum"]["properties"]["recorded_by"]
        assert (recorded_by["nullable"], recorded_by["readOnly"]) == (True, True)
        assert "credential:<key ID>" in recorded_by["description"]
        assert "recorded_by" not in schemas["ActumWrite"]["properties"]
        one, many = schemas["ActumOrBatch"]["oneOf"]
        assert one == {"$ref": "#/components/schemas/ActumWrite"}
        assert many == {"type": "array", "items": one}
        assert schemas["ActumKind"]["enum"] == [
            "message",
            "thought",
            "tool_request",
            "tool_response",
        ]


@pytest.mark.slow
# Once per build (the newest pair, on both databases): its examples are the same on
# every run (derandomized), and a run of the 24 takes a minute of processor.
@pytest.mark.once
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
@pytest.mark.parametrize(("path", "method"), OPERATIONS, ids=lambda v: str(v).strip("/"))
def test_generated_requests_get_no_5xx_and_fit_the_schema(django_user_model, path, method, mode):
    django_user_model.objects.create_user("ardian", password="ardian-password")
    django_user_model.objects.create_user("rafa", password="rafa-password")
    ardian, rafa = basic("ardian", "ardian-password"), basic("rafa", "rafa-password")
    # dinner-friday exists and is ardian's, so generated calls also reach real
    # acta (as ardian) and someone else's chronicum (as rafa).
    seed = APIClient(headers=ardian)
    url = f"/api/chronica/{CHRONICUM}/acta/"
    for actum in scenario.acta():
        assert seed.post(url, body(actum), format="json").status_code == 201
    key = {"Idempotency-Key": BOOKING_KEY}
    reply = body(scenario.booking_reply())
    assert seed.post(url, reply, format="json", headers=key).status_code == 201

    app = get_wsgi_application()
    operation = schemathesis.openapi.from_wsgi(SCHEMA_URL, app)[path][method]
    cases = st.one_of(
        operation.as_strategy(mode),
        operation.as_strategy(mode, path_parameters={"chronicum_id": CHRONICUM}),
    )

    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=cases, caller=st.sampled_from([ardian, ardian, rafa, {}]))
    def call(case, caller):
        # The schema names basic authentication, so schemathesis makes up
        # credentials too; made-up usernames test Django's login, not chronica
        # (on PostgreSQL a NUL in one is a 500 inside django.contrib.auth). A made-up
        # Host header is refused by Django's CommonMiddleware (DisallowedHost, an HTML
        # 400) before chronica is reached: the project's, not the API's.
        case.headers = {
            k: v
            for k, v in (case.headers or {}).items()
            if k.lower() not in ("authorization", "host")
        }
        response = case.call(app=app, headers=caller)
        case.validate_response(response, checks=CHECKS, headers=caller)

    call()


@pytest.mark.django_db
def test_swagger_try_it_out_examples_are_recorded_as_sent(openapi, ardian):
    """Each example body Swagger UI offers for ``POST .../acta/`` is one the API records:
    a message without a call_id, tool calls with one, and a batch."""
    body_of = openapi["paths"]["/api/chronica/{chronicum_id}/acta/"]["post"]["requestBody"]
    examples = body_of["content"]["application/json"]["examples"]
    sent = [example["value"] for example in examples.values()]
    kinds = {value["kind"] for value in sent if isinstance(value, dict)}
    assert kinds == {"message", "thought", "tool_request", "tool_response"}
    assert any(isinstance(value, list) for value in sent)
    # The first is what "Try it out" fills in.
    assert next(iter(examples.values()))["value"]["kind"] == "message"
    client = APIClient()
    client.force_authenticate(ardian)
    for value in sent:
        response = client.post("/api/chronica/swagger-examples/acta/", value, format="json")
        assert response.status_code == 201, (value, response.json())
