"""Celery tasks that record what an agent said, safe to retry."""

from typing import Any

from chronica import ActorKind, Actum, ActumKind, services
from example_project.celery import app


class LostAcknowledgement(ConnectionError):
    """What a worker sees when the write landed but the answer did not come back."""


@app.task(bind=True, max_retries=3)
def record_agent_reply(
    self: Any,
    owner_id: str,
    chronicum_id: str,
    actor: str,
    content: str,
    *,
    fail_once_after_write: bool = False,
    credential: str | None = None,
) -> str:
    """Record ``actor``'s message in ``chronicum_id`` for ``owner_id``; return the actum's ID.

    The idempotency key comes from the task ID, which a retry keeps, so however
    often Celery runs this task the reply is recorded once and every run returns
    the first actum's ID. ``fail_once_after_write`` makes the first run fail right
    after its write, the case the key exists for. ``credential``: the agent's own
    (its secret), with which the task writes only as that agent, attested; without
    it the task is a trusted server-side writer.
    """
    reply = Actum(
        chronicum_id=chronicum_id,
        kind=ActumKind.MESSAGE,
        actor_kind=ActorKind.AGENT,
        actor=actor,
        content=content,
    )
    writer: Any = services
    if credential is not None:
        writer = services.acting_as(services.authenticate_credential(credential))
    stored = writer.record_actum(owner_id, reply, idempotency_key=f"celery-{self.request.id}")
    if fail_once_after_write and self.request.retries == 0:
        raise self.retry(
            exc=LostAcknowledgement("the write landed, its answer was lost"), countdown=0
        )
    return stored.id
