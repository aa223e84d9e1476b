"""chronica.tasks: erasure and retention as tasks of Django's tasks framework, enqueued
after the commit (the immediate backend runs them as they are enqueued)."""

from __future__ import annotations

import importlib.util

import pytest
from django.db import transaction

from chronica import models, services

from .. import scenario
from ..scenario import OWNER

DJANGO_TASKS = importlib.util.find_spec("django.tasks") is not None  # Django 6
pytest.importorskip("django" if DJANGO_TASKS else "django_tasks")
tasks = pytest.importorskip("chronica.tasks")

pytestmark = pytest.mark.django_db(transaction=True)

IMMEDIATE = {
    "default": {
        "BACKEND": "django.tasks.backends.immediate.ImmediateBackend"
        if DJANGO_TASKS
        else "django_tasks.backends.immediate.ImmediateBackend"
    }
}


@pytest.fixture(autouse=True)
def immediate(settings):
    settings.TASKS = IMMEDIATE


def test_the_erasure_task_runs_after_the_commit():
    services.record_acta(OWNER, scenario.acta())
    with transaction.atomic():
        tasks.enqueue_erasure(OWNER, reason="asked")
        assert models.Actum.objects.count() == 7  # not yet: the transaction is open
    assert models.Actum.objects.count() == 0
    assert models.ErasureRecord.objects.get().reason == "asked"


def test_not_after_a_rollback():
    services.record_acta(OWNER, scenario.acta())

    def failing_request() -> None:
        with transaction.atomic():
            tasks.enqueue_erasure(OWNER)
            raise RuntimeError("the request failed")

    with pytest.raises(RuntimeError):
        failing_request()
    assert models.Actum.objects.count() == 7


def test_the_tasks_answer_json(settings):
    services.record_acta(OWNER, scenario.acta())
    result = tasks.erase_owner.enqueue(OWNER, reason="x")
    assert result.return_value["counts"]["acta"] == 7
    settings.CHRONICA = {"RETENTION": [{"older_than": "1d", "action": "delete"}]}
    assert tasks.apply_retention.enqueue().return_value == {
        "delete older than 1d": {"chronica": 0, "acta": 0}
    }
    tasks.enqueue_retention()
