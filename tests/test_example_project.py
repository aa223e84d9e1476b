"""example_project served the way it would be deployed: uvicorn on asgi.py, gunicorn on wsgi.py.

Each server runs in a subprocess on this run's test database.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.exampleproject import PYTHON, free_port, get, serving

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def uvicorn(django_db_setup: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """example_project.asgi under uvicorn; the base URL."""
    port = free_port()
    command = [PYTHON, "-m", "uvicorn", "example_project.asgi:application", "--port", str(port)]
    log = tmp_path_factory.mktemp("uvicorn") / "server.log"
    with serving([*command, "--host", "127.0.0.1"], port, log) as base:
        yield base


@pytest.mark.parametrize(
    "chronicum_id",
    ["a/b", "", "<script>alert('dinner')</script>"],
    ids=["slash", "empty", "script"],
)
def test_the_home_page_refuses_a_session_id_no_url_can_carry(uvicorn: str, chronicum_id: str):
    from urllib.parse import urlencode

    status, body = get(f"{uvicorn}/?{urlencode({'chronicum': chronicum_id})}")

    assert status == 400
    page = body.decode()
    assert "No URL can name the session" in page
    assert "<script>alert" not in page
    assert "/windows/" not in page


def test_the_home_page_links_to_the_session_of_its_query(uvicorn: str):
    status, body = get(f"{uvicorn}/?chronicum=dinner-friday-2")

    assert status == 200
    page = body.decode()
    assert 'href="/windows/dinner-friday-2/"' in page
    assert 'href="/api/chronica/dinner-friday-2/acta/?kind=message&amp;last_n=3"' in page


def test_gunicorn_serves_the_example_through_wsgi_py(django_db_setup: None, tmp_path: Path):
    port = free_port()
    command = [
        PYTHON,
        "-m",
        "gunicorn",
        "example_project.wsgi:application",
        f"--bind=127.0.0.1:{port}",
        "--workers=1",
    ]
    with serving(command, port, tmp_path / "gunicorn.log") as base:
        assert get(f"{base}/admin/login/")[0] == 200
        assert get(f"{base}/?chronicum=dinner-friday")[0] == 200
        assert get(f"{base}/?chronicum=a/b")[0] == 400
