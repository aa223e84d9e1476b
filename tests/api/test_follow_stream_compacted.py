"""``.../acta/stream/?compacted=true``: the stream of the compacted view."""

from __future__ import annotations

import pytest

from chronica import ActorKind, Actum, ActumKind, services

from .. import scenario
from ..scenario import CHRONICUM
from .test_follow_stream import STREAM, basic, fast_polls, opened, owner, server, wire

__all__ = ["fast_polls", "server"]  # fixtures

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.urls("tests.follow_urls")]


def test_the_compacted_stream_skips_what_a_compaction_hid(server, ardian):
    stored = services.record_acta(owner(ardian), scenario.acta())
    summary = Actum(
        chronicum_id=CHRONICUM,
        kind=ActumKind.THOUGHT,
        actor_kind=ActorKind.AGENT,
        actor="concierge",
        content="ardian wants Rumah Teduh.",
    )
    compaction = services.compact(owner(ardian), CHRONICUM, [summary], through=stored[5].id)
    stream = opened(server, f"{STREAM}?after={stored[0].id}&compacted=true", **basic("ardian"))
    try:
        assert stream.acta(2) == wire([stored[6], *compaction])
    finally:
        stream.close()
