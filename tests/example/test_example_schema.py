"""``/api/schema/`` answers concurrent first requests after a start: no 500 from
drf-spectacular's lazy, thread-unsafe loading of its extensions."""

from __future__ import annotations

import concurrent.futures

import pytest

from tests.exampleproject import PYTHON, environment, free_port, get, serving

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("start", range(2))
def test_concurrent_first_schema_requests_are_all_200(start: int, tmp_path) -> None:
    port = free_port()
    command = [PYTHON, "-m", "uvicorn", "example_project.asgi:application", "--port", str(port)]
    env = environment(DJANGO_THROTTLE_ANON="1000/minute")
    # Ready once the server listens: the probe must not generate a schema itself.
    with (
        serving(
            [*command, "--host", "127.0.0.1", "--no-proxy-headers"],
            port,
            tmp_path / "server.log",
            env=env,
            ready="/static/admin/css/base.css",
        ) as base,
        concurrent.futures.ThreadPoolExecutor(6) as pool,
    ):
        statuses = list(pool.map(lambda _: get(f"{base}/api/schema/")[0], range(6)))

    assert statuses == [200] * 6
