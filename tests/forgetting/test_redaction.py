"""Redaction: a card number pasted into dinner-friday is removed, the record's order
and who said what stay; on both stores and both databases."""

from __future__ import annotations

import asyncio

import pytest

from chronica import Actum, ChronicumNotFound, InvalidQuery, NotPermitted, Redaction
from chronica.services import AgentIdentity, Chronicarius, OwnerIdentity
from chronica.signals import actum_redacted

from ..scenario import CHRONICUM, OWNER, REQ, A, acta

CARD = "4111 1111 1111 1111"
BOOKING = AgentIdentity(owner_id=OWNER, actor="booking", key_id="b00k1n9b00k1")


def pasted() -> Actum:
    return Actum(
        chronicum_id=CHRONICUM,
        kind=REQ,
        actor_kind=A,
        actor="booking",
        content=f"pay with card {CARD}",
        call_id="booking-reply-1",
        data={"card": CARD, "party": 4},
    )


@pytest.fixture
def dinner(chronicarius):
    stored = chronicarius.record_acta(OWNER, [*acta()[:3], pasted(), *acta()[3:]])
    return stored


def test_the_content_and_data_are_gone_and_the_rest_stays(chronicarius, dinner):
    card = dinner[3]
    redacted = chronicarius.redact_actum(OWNER, CHRONICUM, card.id, reason="a card number")
    assert redacted.content == ""
    assert redacted.data is None
    assert isinstance(redacted.redacted, Redaction)
    assert redacted.redacted.reason == "a card number"
    window = chronicarius.get_acta(OWNER, CHRONICUM)
    assert [a.id for a in window] == [a.id for a in dinner]
    kept = window[3]
    assert (kept.kind, kept.actor_kind, kept.actor, kept.call_id, kept.at) == (
        card.kind,
        card.actor_kind,
        card.actor,
        card.call_id,
        card.at,
    )
    assert kept == redacted
    assert [a for i, a in enumerate(window) if i != 3] == [
        a for i, a in enumerate(dinner) if i != 3
    ]
    assert CARD not in repr(window)


def test_its_tokens_count_zero_so_a_budget_sees_the_space(store):
    tens = Chronicarius(store, token_counter=lambda actum: 10)
    dinner = tens.record_acta(OWNER, [*acta()[:3], pasted(), *acta()[3:]])
    before = tens.get_acta(OWNER, CHRONICUM, max_tokens=40)
    assert before == dinner[4:]
    tens.redact_actum(OWNER, CHRONICUM, dinner[3].id)
    after = tens.get_acta(OWNER, CHRONICUM, max_tokens=40)
    assert [a.id for a in after] == [a.id for a in dinner[3:]]


def test_repeating_it_changes_nothing_and_signals_once(chronicarius, dinner):
    sent = []

    def receiver(sender, owner_id, actum, **kwargs):
        sent.append((owner_id, actum.id))

    actum_redacted.connect(receiver)
    try:
        first = chronicarius.redact_actum(OWNER, CHRONICUM, dinner[3].id, reason="first")
        again = chronicarius.redact_actum(OWNER, CHRONICUM, dinner[3].id, reason="again")
    finally:
        actum_redacted.disconnect(receiver)
    assert again == first
    assert again.redacted.reason == "first"
    assert sent == [(OWNER, dinner[3].id)]


def test_another_owners_chronicum_answers_like_a_missing_one(chronicarius, dinner):
    with pytest.raises(ChronicumNotFound):
        chronicarius.redact_actum("rafa", CHRONICUM, dinner[3].id)
    with pytest.raises(ChronicumNotFound):
        chronicarius.redact_actum(OWNER, "no-such-dinner", dinner[3].id)
    assert chronicarius.get_acta(OWNER, CHRONICUM)[3].content.endswith(CARD)


def test_an_id_that_is_no_actum_of_the_chronicum_is_invalid(chronicarius, dinner):
    for actum_id in ("no-such-actum", "x" * 300, "nul\x00"):
        with pytest.raises(InvalidQuery):
            chronicarius.redact_actum(OWNER, CHRONICUM, actum_id)
    with pytest.raises(InvalidQuery):
        chronicarius.redact_actum(OWNER, CHRONICUM, dinner[3].id, reason="nul\x00")
    with pytest.raises(InvalidQuery):
        chronicarius.redact_actum(OWNER, CHRONICUM, dinner[3].id, reason=None)
    assert chronicarius.get_acta(OWNER, CHRONICUM)[3].redacted is None


def test_an_agent_credential_may_not_redact_the_owner_may(chronicarius, dinner, store):
    from chronica.stores.db import DjangoStore

    if isinstance(store, DjangoStore):
        from ..credentials import on_file

        on_file(BOOKING)
    with pytest.raises(NotPermitted):
        chronicarius.acting_as(BOOKING).redact_actum(OWNER, CHRONICUM, dinner[3].id)
    assert chronicarius.get_acta(OWNER, CHRONICUM)[3].redacted is None
    person = chronicarius.acting_as(OwnerIdentity(OWNER))
    assert person.redact_actum(OWNER, CHRONICUM, dinner[3].id).redacted is not None


def test_the_asyncio_twin(chronicarius, dinner):
    redacted = asyncio.run(chronicarius.aredact_actum(OWNER, CHRONICUM, dinner[3].id))
    assert redacted.content == ""


@pytest.mark.django_db(transaction=True)
def test_on_postgresql_a_redaction_is_one_statement():
    """The UPDATE and the NOTIFY to the chronicum's followers in one statement: no
    transaction of its own around them (the NOTIFY goes out at that statement's commit)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from chronica import services

    if connection.vendor != "postgresql":
        pytest.skip("one statement is PostgreSQL's; SQLite's redaction is one transaction")
    stored = services.record_acta(OWNER, [*acta()[:2], pasted()])
    with CaptureQueriesContext(connection) as captured:
        services.redact_actum(OWNER, CHRONICUM, stored[2].id, reason="a card number")
    statements = [q["sql"] for q in captured.captured_queries]
    # (the LangGraph app, installed here, looks for messages that held it: one read)
    langgraph = [sql for sql in statements if "chronica_langgraph_messages" in sql]
    ours = [sql for sql in statements if sql not in langgraph]
    assert len(ours) == 1, statements
    assert "pg_notify" in ours[0]
    assert len(langgraph) == 1, statements
    assert langgraph[0].startswith("SELECT"), statements
