"""DRF's browsable API on chronica's routes, as a person in a browser sees it: one
breadcrumb a route, and descriptions in words, not Python's reStructuredText."""

from __future__ import annotations

import re
from html import unescape

import pytest

from ..scenario import CHRONICUM
from .test_api import as_ardian, dinner

__all__ = ["as_ardian", "dinner"]  # fixtures

PAGES = [
    "/api/chronica/",
    f"/api/chronica/{CHRONICUM}/",
    f"/api/chronica/{CHRONICUM}/acta/",
    f"/api/chronica/{CHRONICUM}/state/?namespace=dinner",
]


def page(client, path: str) -> str:
    response = client.get(path, HTTP_ACCEPT="text/html")
    assert response.status_code in (200, 404), response.status_code
    assert response["Content-Type"].startswith("text/html")
    return response.content.decode()


def breadcrumbs(html: str) -> list[tuple[str, str]]:
    (crumbs,) = re.findall(r'<ul class="breadcrumb">(.*?)</ul>', html, re.S)
    return re.findall(r'<a href="([^"]+)">([^<]+)</a>', crumbs)


def description(html: str) -> str:
    (text,) = re.findall(r'<div class="pull-left">\s*(.*?)\s*</div>', html, re.S)
    return unescape(text)


@pytest.mark.django_db
class TestBrowsableAPI:
    def test_one_breadcrumb_a_route(self, as_ardian, dinner):
        crumbs = breadcrumbs(page(as_ardian, f"/api/chronica/{CHRONICUM}/acta/"))
        assert crumbs == [
            ("/api/chronica/", "Chronicum List"),
            (f"/api/chronica/{CHRONICUM}/", "Chronicum Instance"),
            (f"/api/chronica/{CHRONICUM}/acta/", "Acta"),
        ]
        # Reached without the slash, too.
        without = breadcrumbs(page(as_ardian, f"/api/chronica/{CHRONICUM}/acta"))
        assert [name for _, name in without] == ["Chronicum List", "Chronicum Instance", "Acta"]

    @pytest.mark.parametrize("path", PAGES)
    def test_descriptions_hold_no_restructuredtext(self, as_ardian, dinner, path):
        text = description(page(as_ardian, path))
        assert len(text) > 40
        assert "``" not in text
        assert ":class:" not in text
        assert ":meth:" not in text

    @pytest.mark.parametrize("path", PAGES)
    def test_without_markdown_no_markup_shows(self, as_ardian, dinner, path, monkeypatch):
        # A project without the markdown package: DRF shows descriptions as plain text.
        from rest_framework.utils import formatting

        monkeypatch.setattr(formatting, "apply_markdown", None)
        text = description(page(as_ardian, path))
        assert "`" not in text
        assert "<code>" not in text

    def test_options_describes_the_action(self, as_ardian, dinner):
        described = as_ardian.options(f"/api/chronica/{CHRONICUM}/acta/").json()["description"]
        assert described.startswith("The acta of the chronicum, oldest first")
        assert "``" not in described
