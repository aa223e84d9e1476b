"""A Celery task that records an agent's reply, run by a real worker on the local Redis.

The task's idempotency key comes from its task ID, which Celery keeps across
retries: a task that fails right after its write and is retried records once.
"""

from __future__ import annotations

import os
import socket
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import celery.exceptions
import pytest

from chronica import services
from tests import scenario
from tests.exampleproject import PYTHON, ROOT, environment, stop

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# A Redis database of its own and a queue per test, so no other worker takes our tasks.
REDIS_URL = os.environ.get("CHRONICA_TEST_REDIS_URL", "redis://127.0.0.1:6379/13")


@pytest.fixture
def redis_url() -> str:
    parts = urlsplit(REDIS_URL)
    try:
        socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379), 3).close()
    except OSError as exc:
        pytest.fail(
            f"Redis is not reachable at {parts.hostname}:{parts.port or 6379} ({exc}): start it"
            " (redis-server --daemonize yes) or point CHRONICA_TEST_REDIS_URL at another one."
        )
    return REDIS_URL


@pytest.fixture
def queue(redis_url: str, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A worker of example_project on a fresh queue and on this run's test database."""
    name = f"chronica-test-{uuid.uuid4().hex}"
    log_path = tmp_path / "worker.log"
    with log_path.open("w", encoding="utf-8") as log:
        worker = subprocess.Popen(
            [
                PYTHON,
                "-m",
                "celery",
                "--app=example_project",
                "worker",
                "--pool=solo",
                f"--queues={name}",
                f"--hostname={name}@%h",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "--loglevel=INFO",
            ],
            cwd=ROOT,
            env=environment(
                CELERY_BROKER_URL=redis_url,
                CELERY_RESULT_BACKEND=redis_url,
                # A retry goes to the default queue: make it this test's queue.
                CELERY_TASK_DEFAULT_QUEUE=name,
                # The matrix turns every DeprecationWarning into an error; in the worker that
                # would kill Celery itself (it calls redis-py's deprecated setex). chronica's
                # own warnings stay errors in this process.
                PYTHONWARNINGS="default::DeprecationWarning",
            ),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            yield name, log_path
        finally:
            stop(worker)


@pytest.fixture
def celery_app(redis_url: str) -> Iterator[object]:
    """example_project's Celery app, sending to the test's Redis from this process."""
    from example_project.celery import app

    saved = {key: app.conf[key] for key in ("broker_url", "result_backend", "task_default_queue")}
    app.conf.update(broker_url=redis_url, result_backend=redis_url)
    try:
        yield app
    finally:
        app.conf.update(saved)


def answer(result: Any, log_path: Path) -> Any:
    """The task's return value; the worker's log if it never comes.

    The timeout only stops a dead worker from hanging the run: it is no measurement.
    """
    try:
        return result.get(timeout=120)
    except celery.exceptions.TimeoutError:
        pytest.fail(f"no answer from the worker; its log:\n{log_path.read_text(encoding='utf-8')}")


def test_a_task_that_fails_after_writing_and_is_retried_records_the_reply_once(
    queue: tuple[str, Path], celery_app: object
) -> None:
    from example_project.dinner.tasks import record_agent_reply

    name, log_path = queue
    for actum in scenario.acta():
        services.record_actum(scenario.OWNER, actum)

    result = record_agent_reply.apply_async(
        args=(scenario.OWNER, scenario.CHRONICUM, "booking", scenario.BOOKING_REPLY),
        kwargs={"fail_once_after_write": True},
        queue=name,
    )
    stored_id = answer(result, log_path)

    # The first run wrote and failed; the retry, same task ID, found the key.
    assert f"[{result.id}] retry:" in log_path.read_text(encoding="utf-8")
    acta = services.get_acta(scenario.OWNER, scenario.CHRONICUM)
    assert len(acta) == 8
    assert [(a.id, a.content) for a in acta if a.actor == "booking"] == [
        (stored_id, scenario.BOOKING_REPLY)
    ]


def test_two_tasks_are_two_replies(queue: tuple[str, Path], celery_app: object) -> None:
    from example_project.dinner.tasks import record_agent_reply

    name, log_path = queue
    replies = (scenario.BOOKING_REPLY, scenario.BOOKING_REPLY_REWORDED)
    for content in replies:
        result = record_agent_reply.apply_async(
            args=(scenario.OWNER, scenario.CHRONICUM, "booking", content), queue=name
        )
        answer(result, log_path)

    # The key is the task's, not the content's: two tasks, two acta.
    acta = services.get_acta(scenario.OWNER, scenario.CHRONICUM, actor_kinds=["agent"])
    assert [a.content for a in acta] == list(replies)


def test_a_view_hands_the_reply_to_a_worker_with_the_owner_it_computed(
    queue: tuple[str, Path], celery_app: Any, client: Any, settings: Any, ardian: Any, rafa: Any
) -> None:
    from celery.result import AsyncResult

    name, log_path = queue
    celery_app.conf.task_default_queue = name  # what the view's .delay() sends to
    settings.ROOT_URLCONF = "example_project.urls"
    owner_id = services.owner_id_for(ardian)
    for actum in scenario.acta():
        services.record_actum(owner_id, actum)

    client.force_login(rafa)
    assert client.post(f"/windows/{scenario.CHRONICUM}/hold/").status_code == 404
    client.force_login(ardian)
    response = client.post(f"/windows/{scenario.CHRONICUM}/hold/")

    assert response.status_code == 202
    stored_id = answer(AsyncResult(response.json()["task_id"], app=celery_app), log_path)
    # The worker had no request: the owner it wrote for is the string the view computed.
    acta = services.get_acta(owner_id, scenario.CHRONICUM)
    assert [(a.id, a.actor, a.content) for a in acta[7:]] == [
        (stored_id, "booking", scenario.BOOKING_REPLY)
    ]
