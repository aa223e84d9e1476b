"""What every suite shares: the store under test, fresh IDs, the dinner, real threads."""

from __future__ import annotations

import datetime as dt
import secrets
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..values import ActorKind, Actum, ActumKind, Chronicum

M, T, REQ, RES = (
    ActumKind.MESSAGE,
    ActumKind.THOUGHT,
    ActumKind.TOOL_REQUEST,
    ActumKind.TOOL_RESPONSE,
)


def _expect(condition: bool, message: str) -> None:
    # Not `assert`: the suite must fail under `python -O` too.
    if not condition:
        raise AssertionError(message)


def _expect_raises(error: type[Exception], call: Callable[[], Any], what: str) -> None:
    try:
        result = call()
    except error:
        return
    raise AssertionError(f"{what}: expected {error.__name__}, got {result!r}")


class _Base:
    ability = ""
    """The ``supports_*`` flag (``chronica.interfaces.ABILITIES``) a store under this
    suite must set; empty for the seed's suites."""

    concurrency = 40
    """How many threads the concurrent cases start."""

    def make_store(self) -> Any:
        """Return the store under test (a new one, or one shared with earlier cases)."""
        raise NotImplementedError("subclass the conformance suite and define make_store()")

    def release_thread_resources(self) -> None:
        """Called at the end of every worker thread. By default it closes the
        thread's Django database connections, if Django is configured."""
        from django.conf import settings

        if settings.configured:
            from django.db import connections

            connections.close_all()

    # -- helpers -------------------------------------------------------------

    @staticmethod
    def new_id(prefix: str = "conformance") -> str:
        return f"{prefix}-{secrets.token_hex(8)}"

    def new_chronicum(self, store: Any, owner_id: str = "ardian") -> Chronicum:
        now = dt.datetime.now(dt.UTC)
        chronicum = Chronicum(self.new_id(), owner_id, now, now)
        store.create(chronicum)
        return chronicum

    def dinner(self, store: Any) -> tuple[str, list[Actum]]:
        """Six acta with token counts 10, 20, 30, 40, 50, 60; kinds M, T, M, T, M, T."""
        cid = self.new_chronicum(store).id
        acta = [self.actum(cid, f"a{i}", kind=(M, T)[i % 2]) for i in range(6)]
        recorded = store.append(None, cid, acta, tokens=[10, 20, 30, 40, 50, 60])
        return cid, recorded.acta

    def labelled(self, chronicum_id: str, size: int, label: str = "b") -> list[Actum]:
        """``size`` acta whose contents are ``label`` and their position."""
        return [self.actum(chronicum_id, f"{label}{i}") for i in range(size)]

    @staticmethod
    def actum(
        chronicum_id: str,
        content: str = "hello",
        *,
        kind: ActumKind = M,
        actor_kind: ActorKind = ActorKind.HUMAN,
        actor: str = "ardian",
        id: str | None = None,
        call_id: str = "",
        data: Any = None,
    ) -> Actum:
        return Actum(
            chronicum_id=chronicum_id,
            kind=kind,
            actor_kind=actor_kind,
            actor=actor,
            content=content,
            id=id if id is not None else secrets.token_hex(16),
            call_id=call_id,
            data=data,
        )

    def run_threads(self, count: int, work: Callable[[int], Any]) -> list[Any]:
        """Run ``work(i)`` for ``i`` in ``range(count)`` in ``count`` threads started together."""
        barrier = threading.Barrier(count)

        def worker(i: int) -> Any:
            try:
                barrier.wait(timeout=30)
                return work(i)
            finally:
                self.release_thread_resources()

        with ThreadPoolExecutor(max_workers=count) as pool:
            return list(pool.map(worker, range(count)))
