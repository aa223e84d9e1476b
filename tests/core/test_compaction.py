"""compact and get_acta(compacted=True): the concierge's summary of dinner-friday,
recorded beside the acta it stands for, on both stores."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from io import StringIO

import pytest
from django.core.management import call_command

from chronica import (
    ActorKind,
    Actum,
    ActumKind,
    ChronicumNotFound,
    InvalidActum,
    InvalidQuery,
    NotPermitted,
    StoreUnsupported,
    services,
)
from chronica.services import Chronicarius
from chronica.services.identity import AgentIdentity
from chronica.signals import actum_recorded
from chronica.stores.memory import InMemoryStore

from .. import scenario
from ..scenario import CHRONICUM, OWNER
from ..teststores import PlainStore


def summary(content: str = "ardian wants Rumah Teduh for four, 7pm Friday.", **kw) -> Actum:
    fields = {
        "chronicum_id": CHRONICUM,
        "kind": ActumKind.THOUGHT,
        "actor_kind": ActorKind.AGENT,
        "actor": "concierge",
        "content": content,
    }
    fields.update(kw)
    return Actum(**fields)


def test_a_compaction_hides_nothing_from_those_who_do_not_ask(chronicarius):
    stored = chronicarius.record_acta(OWNER, scenario.acta())
    compaction = chronicarius.compact(OWNER, CHRONICUM, [summary()], through=stored[5].id)
    assert [a.compacts for a in compaction] == [stored[5].id]
    assert compaction[0].id not in {a.id for a in stored}
    assert chronicarius.get_acta(OWNER, CHRONICUM) == [*stored, *compaction]
    assert chronicarius.get_acta(OWNER, CHRONICUM, compacted=True) == [*compaction, stored[6]]
    assert chronicarius.get_acta(OWNER, CHRONICUM, compacted=True, kinds="message") == [stored[6]]
    page = chronicarius.get_acta_page(OWNER, CHRONICUM, compacted=True, last_n=1)
    assert page.acta == [stored[6]]
    older = chronicarius.get_acta_page(
        OWNER, CHRONICUM, compacted=True, last_n=1, before=page.next_before
    )
    assert older.acta == compaction
    assert older.next_before is None


def test_acta_written_while_the_summary_was_made_follow_it(chronicarius):
    """The booking agent answers while the concierge summarises: its actum was recorded
    after the through the concierge read, so it comes after the summary."""
    stored = chronicarius.record_acta(OWNER, scenario.acta())
    late = chronicarius.record_actum(OWNER, scenario.booking_reply())
    compaction = chronicarius.compact(OWNER, CHRONICUM, [summary()], through=stored[6].id)
    assert chronicarius.get_acta(OWNER, CHRONICUM, compacted=True) == [*compaction, late]


def test_a_caller_never_sets_compacts_through_record_acta(chronicarius):
    stored = chronicarius.record_acta(OWNER, scenario.acta())
    forged = chronicarius.record_actum(OWNER, dataclasses.replace(summary(), compacts=stored[0].id))
    assert forged.compacts == ""
    assert chronicarius.get_acta(OWNER, CHRONICUM, compacted=True)[-1] == forged


def test_what_a_compaction_refuses_writes_nothing(chronicarius):
    stored = chronicarius.record_acta(OWNER, scenario.acta())
    through = stored[6].id
    with pytest.raises(InvalidQuery, match="through"):
        chronicarius.compact(OWNER, CHRONICUM, [summary()], through="no-such-actum")
    with pytest.raises(ValueError, match="through"):
        chronicarius.compact(OWNER, CHRONICUM, [summary()], through=None)  # type: ignore[arg-type]
    with pytest.raises(InvalidActum):
        chronicarius.compact(OWNER, CHRONICUM, [], through=through)
    with pytest.raises(InvalidActum):
        chronicarius.compact(OWNER, CHRONICUM, [summary(content="")], through=through)
    with pytest.raises(InvalidActum, match="chronicum"):
        chronicarius.compact(OWNER, CHRONICUM, [summary(chronicum_id="elsewhere")], through=through)
    with pytest.raises(ChronicumNotFound):
        chronicarius.compact("rafa", CHRONICUM, [summary()], through=through)
    with pytest.raises(ChronicumNotFound):
        chronicarius.compact(
            OWNER, "no-such-dinner", [summary(chronicum_id="no-such-dinner")], through=through
        )
    assert chronicarius.get_acta(OWNER, CHRONICUM) == stored
    with pytest.raises(ChronicumNotFound):
        chronicarius.get_chronicum(OWNER, "no-such-dinner")
    with pytest.raises(InvalidQuery, match="compacted"):
        chronicarius.get_acta(OWNER, CHRONICUM, compacted="yes")  # type: ignore[arg-type]


def test_a_keyed_compaction_is_recorded_once_and_signalled_once(chronicarius):
    stored = chronicarius.record_acta(OWNER, scenario.acta())
    seen: list[Actum] = []

    def receiver(sender, owner_id, actum, **kwargs):
        seen.append(actum)

    actum_recorded.connect(receiver)
    try:
        first = chronicarius.compact(
            OWNER,
            CHRONICUM,
            [summary(), summary("and the booking")],
            through=stored[6].id,
            idempotency_key="concierge-compaction-1",
        )
        again = chronicarius.compact(
            OWNER,
            CHRONICUM,
            [summary("other")],
            through=stored[6].id,
            idempotency_key="concierge-compaction-1",
        )
    finally:
        actum_recorded.disconnect(receiver)
    assert not first.replayed
    assert again.replayed
    assert again == first
    assert seen == list(first)


def test_an_agents_credential_compacts_only_as_its_agent():
    # (in memory: DjangoStore checks the credential in its table, see test_api_compaction)
    chronicarius = Chronicarius(InMemoryStore())
    stored = chronicarius.record_acta(OWNER, scenario.acta())
    concierge = chronicarius.acting_as(
        AgentIdentity(
            owner_id=OWNER,
            actor="concierge",
            actor_kinds=frozenset({ActorKind.AGENT}),
            key_id="k1",
            chronica=None,
        )
    )
    with pytest.raises(NotPermitted):
        concierge.compact(OWNER, CHRONICUM, [summary(actor="booking")], through=stored[6].id)
    stored_summary = concierge.compact(OWNER, CHRONICUM, [summary()], through=stored[6].id)
    assert stored_summary[0].recorded_by == "credential:k1"


def test_the_async_twins_and_the_follower(chronicarius):
    stored = chronicarius.record_acta(OWNER, scenario.acta())

    async def run():
        compaction = await chronicarius.acompact(
            OWNER, CHRONICUM, [summary()], through=stored[4].id
        )
        window = await chronicarius.aget_acta(OWNER, CHRONICUM, compacted=True)
        follower = chronicarius.afollow(OWNER, CHRONICUM, after=stored[0].id, compacted=True)
        followed = [await follower.__anext__() for _ in range(3)]
        await follower.aclose()
        return compaction, window, followed

    compaction, window, followed = asyncio.run(run())
    assert window == [*compaction, *stored[5:]]
    # In write order, what the compacted view holds when it is read.
    assert followed == [*stored[5:], *compaction]


def test_a_store_without_compaction_says_so():
    plain = Chronicarius(PlainStore())
    with pytest.raises(StoreUnsupported, match="supports_compaction"):
        plain.get_acta(OWNER, CHRONICUM, compacted=True)
    with pytest.raises(StoreUnsupported, match="supports_compaction"):
        plain.compact(OWNER, CHRONICUM, [summary()], through="x")


@pytest.mark.django_db(transaction=True)
def test_module_functions_and_chronica_show_compacted():
    stored = services.record_acta(OWNER, scenario.acta())
    compaction = services.compact(OWNER, CHRONICUM, [summary()], through=stored[5].id)
    assert services.get_acta(OWNER, CHRONICUM, compacted=True) == [*compaction, stored[6]]
    out = StringIO()
    call_command("chronica_show", CHRONICUM, "--compacted", "--json", stdout=out)
    shown = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [a["id"] for a in shown] == [compaction[0].id, stored[6].id]
    assert shown[0]["compacts"] == stored[5].id
    out = StringIO()
    call_command("chronica_show", CHRONICUM, "--json", stdout=out)
    assert len(out.getvalue().splitlines()) == 8
