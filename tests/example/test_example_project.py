"""example_project served the way it would be deployed: uvicorn on asgi.py, gunicorn on wsgi.py.

Each server runs in a subprocess on this run's test database.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.exampleproject import PYTHON, ROOT, environment, free_port, get, serving

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
    assert 'href="/follow/dinner-friday-2/"' in page
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


@pytest.mark.parametrize(("variable", "debug"), [("", "False"), ("0", "False"), ("1", "True")])
def test_debug_is_off_unless_DJANGO_DEBUG_is_1(variable: str, debug: str):
    env = environment(DJANGO_DEBUG=variable)
    if not variable:
        del env["DJANGO_DEBUG"]
    done = subprocess.run(
        [PYTHON, "-c", "from django.conf import settings; print(settings.DEBUG)"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == debug


def test_with_debug_off_errors_tell_nothing_and_the_admin_keeps_its_styles(uvicorn: str):
    status, body = get(f"{uvicorn}/no-such-page/")
    assert status == 404
    assert b"URLconf" not in body  # DEBUG's page lists every route

    status, css = get(f"{uvicorn}/static/admin/css/base.css")
    assert status == 200
    assert b"body" in css
    status, login = get(f"{uvicorn}/admin/login/")
    assert b"/static/admin/css/base.css" in login
