"""LangGraph's checkpointer conformance suite (``langgraph-checkpoint-conformance``) on
``ChronicaSaver``, on the database of the run: every capability, the base ones (put,
put_writes, get_tuple, list, delete_thread) and the extended ones (delete_for_runs,
prune, copy_thread), through the asyncio methods and again through the sync ones."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import Capability

from chronica.integrations.langgraph import ChronicaSaver

pytestmark = pytest.mark.django_db(transaction=True)

OWNER = "conformance-owner"


class SyncChronicaSaver(ChronicaSaver):
    """The suite calls the asyncio methods: these run the sync ones (in a thread, as
    LangGraph's sync graph does), so that the suite checks them too."""

    async def aget_tuple(self, config: Any) -> Any:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(self, config: Any, **kwargs: Any) -> AsyncIterator[Any]:
        for item in await asyncio.to_thread(lambda: list(self.list(config, **kwargs))):
            yield item

    async def aput(self, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(self.put, *args, **kwargs)

    async def aput_writes(self, *args: Any, **kwargs: Any) -> None:
        await asyncio.to_thread(self.put_writes, *args, **kwargs)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy)

    if hasattr(ChronicaSaver, "acopy_thread"):

        async def acopy_thread(self, source: str, target: str) -> None:
            await asyncio.to_thread(self.copy_thread, source, target)


SAVERS = {"asyncio": ChronicaSaver, "sync": SyncChronicaSaver}
# copy_thread joins once chronica.services.fork_chronicum is there (issue 36).
CAPABILITIES = [
    c for c in Capability if c is not Capability.COPY_THREAD or "copy_thread" in vars(ChronicaSaver)
]


@pytest.mark.parametrize("methods", list(SAVERS))
@pytest.mark.parametrize("capability", [c.value for c in CAPABILITIES])
async def test_conformance(methods: str, capability: str) -> None:
    saver_class = SAVERS[methods]

    @checkpointer_test(name=f"ChronicaSaver-{methods}")
    async def factory() -> AsyncIterator[ChronicaSaver]:
        yield saver_class(owner_id=OWNER)

    report = await validate(factory, capabilities={capability})
    result = report.results[capability]
    assert result.detected, f"{capability} is not implemented"
    assert result.passed, "\n\n".join(str(f) for f in result.failures)
    assert result.tests_failed == 0
    assert result.tests_passed > 0
