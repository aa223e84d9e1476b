"""fork_chronicum: the dinner copied into a branch, on both stores."""

from __future__ import annotations

import asyncio
import re

import pytest

from chronica import ChronicumExists, ChronicumNotFound, InvalidQuery, StoreUnsupported
from chronica.services import Chronicarius

from .. import scenario
from ..scenario import CHRONICUM, OWNER
from ..teststores import PlainStore


def fields(actum):
    return (
        actum.kind,
        actum.actor_kind,
        actum.actor,
        actum.content,
        actum.call_id,
        actum.data,
        actum.at,
        actum.recorded_by,
    )


def test_a_fork_holds_copies_of_every_actum(chronicarius):
    stored = chronicarius.record_acta(OWNER, scenario.acta(), idempotency_key="dinner")
    forked = chronicarius.fork_chronicum(OWNER, CHRONICUM)
    assert re.fullmatch(r"[0-9a-f]{32}", forked.id)
    assert forked.owner_id == OWNER
    assert chronicarius.get_chronicum(OWNER, forked.id) == forked
    copies = chronicarius.get_acta(OWNER, forked.id)
    assert [fields(a) for a in copies] == [fields(a) for a in stored]
    assert not {a.id for a in copies} & {a.id for a in stored}
    assert chronicarius.get_acta(OWNER, CHRONICUM) == stored
    # No idempotency keys come with the copies: the key is free in the fork.
    again = chronicarius.record_acta(OWNER, scenario.acta(forked.id), idempotency_key="dinner")
    assert not again.replayed


def test_a_fork_from_an_actum_with_a_chosen_id(chronicarius):
    stored = chronicarius.record_acta(OWNER, scenario.acta())
    forked = chronicarius.fork_chronicum(
        OWNER, CHRONICUM, through=stored[2].id, new_id="dinner-friday-kayu-manis"
    )
    assert forked.id == "dinner-friday-kayu-manis"
    copies = chronicarius.get_acta(OWNER, forked.id)
    assert [a.content for a in copies] == [a.content for a in stored[:3]]
    chronicarius.record_actum(OWNER, scenario.booking_reply(chronicum_id=forked.id))
    assert len(chronicarius.get_acta(OWNER, CHRONICUM)) == 7


def test_what_a_fork_refuses_writes_nothing(chronicarius):
    stored = chronicarius.record_acta(OWNER, scenario.acta())
    chronicarius.record_actum("rafa", scenario.booking_reply(chronicum_id="rafa-lunch"))
    with pytest.raises(ChronicumNotFound):
        chronicarius.fork_chronicum("rafa", CHRONICUM, new_id="rafa-copy")
    with pytest.raises(ChronicumNotFound):
        chronicarius.fork_chronicum(OWNER, "no-such-dinner", new_id="copy")
    with pytest.raises(ChronicumExists):
        chronicarius.fork_chronicum(OWNER, CHRONICUM, new_id="rafa-lunch")
    with pytest.raises(InvalidQuery, match="through"):
        chronicarius.fork_chronicum(OWNER, CHRONICUM, through="no-such-actum", new_id="copy")
    with pytest.raises(ValueError, match="through"):
        chronicarius.fork_chronicum(OWNER, CHRONICUM, through=7, new_id="copy")
    with pytest.raises(ValueError, match="chronicum_id"):
        chronicarius.fork_chronicum(OWNER, CHRONICUM, new_id="bad\nid")
    for missing in ("rafa-copy", "copy"):
        with pytest.raises(ChronicumNotFound):
            chronicarius.get_chronicum(OWNER, missing)
    assert chronicarius.get_acta(OWNER, CHRONICUM) == stored


def test_the_async_twin(chronicarius):
    chronicarius.record_acta(OWNER, scenario.acta())
    forked = asyncio.run(chronicarius.afork_chronicum(OWNER, CHRONICUM, new_id="async-copy"))
    assert len(chronicarius.get_acta(OWNER, forked.id)) == 7


def test_a_store_without_fork_says_so():
    with pytest.raises(StoreUnsupported, match="supports_fork"):
        Chronicarius(PlainStore()).fork_chronicum(OWNER, CHRONICUM)
