"""``erase_owner`` and ``apply_retention`` as tasks of Django's tasks framework
(``django.tasks`` on Django 6; the ``django-tasks`` package, ``chronica[tasks]``, on
Django 5.2), run by whatever task backend the project configures (``TASKS``).

``erase_owner.enqueue(owner_id, reason=...)`` and ``apply_retention.enqueue()`` enqueue
at once; :func:`enqueue_erasure` and :func:`enqueue_retention` enqueue once the
caller's transaction commits (at once outside of one), so that a task never starts
before the request that asked for it has committed, and never after a rollback. A task
answers JSON: the erasure (``owner_hash``, ``at``, ``reason``, ``counts``), or what the
retention did by rule.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from . import services

try:  # Django 6
    from django.tasks import task  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # Django 5.2: the backport
    try:
        from django_tasks import task  # type: ignore[no-redef,unused-ignore]
    except ImportError as exc:  # pragma: no cover - the message is the point
        raise ImportError(
            "chronica.tasks needs Django's tasks framework: Django 6, or"
            " pip install 'chronica[tasks]' (the django-tasks package) on Django 5.2"
        ) from exc

__all__ = ["apply_retention", "enqueue_erasure", "enqueue_retention", "erase_owner"]


@task()  # type: ignore[misc,unused-ignore]
def erase_owner(owner_id: str, reason: str = "") -> dict[str, Any]:
    """:func:`chronica.services.erase_owner`, as a task: the erasure as JSON."""
    erasure = services.erase_owner(owner_id, reason=reason)
    return {
        "owner_hash": erasure.owner_hash,
        "at": erasure.at.isoformat(),
        "reason": erasure.reason,
        "counts": dict(erasure.counts),
    }


@task()  # type: ignore[misc,unused-ignore]
def apply_retention() -> dict[str, dict[str, int]]:
    """:func:`chronica.services.apply_retention`, as a task: what it did, by rule."""
    return services.apply_retention()


def enqueue_erasure(owner_id: str, reason: str = "", *, using: str | None = None) -> None:
    """Enqueue :data:`erase_owner` once the transaction on ``using`` commits."""
    transaction.on_commit(lambda: erase_owner.enqueue(owner_id, reason=reason), using=using)


def enqueue_retention(*, using: str | None = None) -> None:
    """Enqueue :data:`apply_retention` once the transaction on ``using`` commits."""
    transaction.on_commit(apply_retention.enqueue, using=using)
