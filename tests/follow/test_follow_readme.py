"""The README's example of one agent waiting for another runs as written (from
README.md)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.db import connections
from django.test import override_settings

from chronica import services

from ..readme import pages

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## Live: one agent waits for another"


def snippet() -> str:
    for source in pages():  # README.md, then docs/
        text = source.read_text()
        if SECTION in text:
            section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
            return re.findall(r"```python\n(.*?)```", section, flags=re.S)[0]
    raise AssertionError("no follow section in README.md")


@pytest.mark.django_db(transaction=True)
async def test_the_booking_agent_snippet_runs_as_written():
    namespace: dict[str, object] = {}
    exec(compile(snippet(), "README follow example", "exec"), namespace)
    try:
        with override_settings(CHRONICA={"FOLLOW_POLL_INTERVAL": 0.05}):
            services.reset_chronicarius()
            async with asyncio.timeout(60):
                await namespace["dinner"]("ardian")  # type: ignore[operator]
            acta = await services.aget_acta("ardian", "dinner-friday")
    finally:
        services.reset_chronicarius()
        await sync_to_async(connections.close_all)()
    assert [(a.actor, a.content) for a in acta] == [
        ("concierge", "Rumah Teduh or Kayu Manis?"),
        ("ardian", "Rumah Teduh."),
        ("booking", "Booking Rumah Teduh for four at 7pm."),
    ]
