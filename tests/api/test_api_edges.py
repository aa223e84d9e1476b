"""The edges of the API's URLs: every answer under chronica's routes is JSON, a path
that names no route included; a path that is not UTF-8 names no chronicum."""

from __future__ import annotations

import pytest
from django.test import override_settings

from ..scenario import CHRONICUM
from .test_api import GOOD, acta_url, as_ardian, chronicum_url, dinner

__all__ = ["as_ardian", "dinner"]  # fixtures

NOT_FOUND = {"detail": "Not found."}
TOO_MANY = "&".join(f"p{i}=1" for i in range(1001))


def json_of(response) -> dict:
    assert response["Content-Type"] == "application/json", response.content[:200]
    return response.json()


@pytest.mark.django_db
class TestNoRoute:
    @pytest.mark.parametrize(
        "path",
        [
            "/api/chronica/dinner%2Ffriday/",
            "/api/chronica/dinner%2Ffriday/acta/",
            "/api/chronica/dinner%2Ffriday/acta/stream/",
            f"/api/chronica/{CHRONICUM}/nothing/",
            f"/api/chronica/{CHRONICUM}/acta/nothing/",
            "/api/chronica/a/b/c/d/",
        ],
    )
    def test_a_path_no_route_names_is_a_json_404(self, as_ardian, path):
        for method in ("get", "post", "delete", "put"):
            response = getattr(as_ardian, method)(path, GOOD, format="json")
            assert response.status_code == 404, (method, path)
            assert json_of(response) == NOT_FOUND
        assert as_ardian.get("/api/chronica/").json()["results"] == []

    def test_a_slash_in_an_id_answers_like_a_missing_chronicum(self, as_ardian):
        assert json_of(as_ardian.get("/api/chronica/a%2Fb/")) == json_of(
            as_ardian.get(chronicum_url("never-existed"))
        )


@pytest.mark.django_db
class TestTooManyQueryParameters:
    """Past DATA_UPLOAD_MAX_NUMBER_FIELDS (1,000) query parameters Django refuses to read
    the query: a JSON 400 naming the setting (Django's was an HTML page)."""

    @pytest.mark.parametrize(
        "url", ["/api/chronica/", chronicum_url(), acta_url(), acta_url() + "stream/"]
    )
    def test_a_read(self, as_ardian, dinner, url):
        response = as_ardian.get(f"{url}?{TOO_MANY}")
        assert response.status_code == 400
        assert "DATA_UPLOAD_MAX_NUMBER_FIELDS" in json_of(response)["detail"]

    def test_a_write_writes_nothing(self, as_ardian, dinner):
        response = as_ardian.post(f"{acta_url()}?{TOO_MANY}", GOOD, format="json")
        assert response.status_code == 400
        assert "DATA_UPLOAD_MAX_NUMBER_FIELDS" in json_of(response)["detail"]
        assert len(as_ardian.get(acta_url()).json()) == len(dinner)

    def test_the_schema_with_chronicas_exception_handler(self, as_ardian):
        rest = {
            "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
            "EXCEPTION_HANDLER": "chronica.api.errors.exception_handler",
        }
        with override_settings(REST_FRAMEWORK=rest):
            response = as_ardian.get(f"/api/schema/?{TOO_MANY}")
        assert response.status_code == 400
        assert "DATA_UPLOAD_MAX_NUMBER_FIELDS" in json_of(response)["detail"]


@pytest.mark.django_db
class TestPathBytes:
    """A WSGI server that keeps the request line (gunicorn's RAW_URI) lets the API see
    the bytes the client percent-encoded; Django's test client is such a server here."""

    def send(self, client, method, quoted, **extra):
        path = f"/api/chronica/{quoted}/acta/"
        return getattr(client, method)(path, GOOD, format="json", RAW_URI=path, **extra)

    @pytest.mark.parametrize("quoted", ["dinner%FFfriday", "dinner%C3friday", "%ED%A0%80"])
    def test_bytes_that_are_not_utf8_are_a_400(self, as_ardian, quoted):
        for method in ("post", "get"):
            response = self.send(as_ardian, method, quoted)
            assert response.status_code == 400, (method, response.content)
            assert json_of(response)["detail"].startswith("the path is not UTF-8")
        assert as_ardian.get("/api/chronica/").json()["results"] == []

    def test_utf8_and_a_literal_percent_are_ids(self, as_ardian):
        assert self.send(as_ardian, "post", "d%C3%ADnner").status_code == 201
        assert self.send(as_ardian, "post", "dinner%25FFfriday").status_code == 201
        listed = {c["id"] for c in as_ardian.get("/api/chronica/").json()["results"]}
        assert listed == {"dínner", "dinner%FFfriday"}
