"""A graph's messages are acta of the thread's chronicum, recorded once each, and a
checkpoint keeps them by reference; the thread belongs to its owner."""

from __future__ import annotations

import gc

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from chronica import ActorKind, ActumKind, ChronicumNotFound, EmptyOwnerID, services
from chronica.integrations.langgraph import ChronicaSaver
from chronica.integrations.langgraph.models import LangGraphBlob, LangGraphMessage

from .scenario import OTHER, OWNER, build, config, say

pytestmark = pytest.mark.django_db(transaction=True)

THREAD = "lg-thread-1"


def without_ids(values):
    """A state's values with the messages' random IDs (a tool message's) left out."""
    return {
        **values,
        "messages": [m.model_copy(update={"id": None}) for m in values.get("messages", [])],
    }


def converse(graph, thread=THREAD, **more):
    graph.invoke(say("what is the weather?", 1), config(thread, **more))
    graph.invoke(say("thanks", 2), config(thread, **more))


def test_the_messages_are_acta_with_their_kinds_actors_and_call_ids():
    converse(build(ChronicaSaver(OWNER)))
    acta = services.get_acta(OWNER, THREAD)
    assert [(a.kind, a.actor_kind, a.actor, a.call_id, a.content) for a in acta] == [
        (ActumKind.MESSAGE, ActorKind.HUMAN, OWNER, "", "what is the weather?"),
        (
            ActumKind.TOOL_REQUEST,
            ActorKind.AGENT,
            "langgraph",
            "call-1",
            'weather({"city": "Lyon"})',
        ),
        (ActumKind.TOOL_RESPONSE, ActorKind.SYSTEM, "weather", "call-1", "sunny in Lyon"),
        (ActumKind.MESSAGE, ActorKind.AGENT, "langgraph", "", "It is sunny in Lyon."),
        (ActumKind.MESSAGE, ActorKind.HUMAN, OWNER, "", "thanks"),
        (ActumKind.MESSAGE, ActorKind.AGENT, "langgraph", "", "You said: thanks"),
    ]
    # The whole message rides on its first actum (a tool request keeps its call too).
    assert acta[0].data["type"] == "human"
    assert acta[1].data["message"]["data"]["tool_calls"][0]["id"] == "call-1"
    assert acta[1].data["tool_call"]["args"] == {"city": "Lyon"}


def test_each_message_is_recorded_once_and_read_back_as_the_in_memory_saver_has_it():
    saver = ChronicaSaver(OWNER, agent="concierge", user_actor="ada")
    graph, reference = build(saver), build(InMemorySaver())
    converse(graph)
    converse(reference)
    # Six messages, six acta, however many checkpoints held them.
    assert len(services.get_acta(OWNER, THREAD)) == 6
    assert LangGraphMessage.objects.filter(thread_id=THREAD).count() == 6
    assert len(list(saver.list(config(THREAD)))) > 6
    ours = graph.get_state(config(THREAD)).values
    theirs = reference.get_state(config(THREAD)).values
    assert without_ids(ours) == without_ids(theirs)
    assert [a.actor for a in services.get_acta(OWNER, THREAD)][:2] == ["ada", "concierge"]
    # Every past checkpoint reads back as the in-memory saver's does.
    ours_history = [without_ids(s.values) for s in graph.get_state_history(config(THREAD))]
    theirs_history = [without_ids(s.values) for s in reference.get_state_history(config(THREAD))]
    assert ours_history == theirs_history


def test_a_checkpoint_keeps_its_messages_by_reference():
    converse(build(ChronicaSaver(OWNER)))
    blobs = LangGraphBlob.objects.filter(thread_id=THREAD, channel="messages")
    assert {b.type for b in blobs} == {"chronica-messages"}
    # Runs of positions: one run when the messages were appended in order.
    assert max(len(bytes(b.blob)) for b in blobs) <= len(b"[[1,6]]")


def test_a_saver_keeps_one_object_a_message_however_many_turns_read_it():
    """Every read of the thread decodes its messages into new objects, which the next put
    is handed: the saver remembers the last object of each message, not every turn's
    copy (30 turns would keep ~465 copies of the person's 30 messages alive)."""
    from langchain_core.messages import HumanMessage

    saver = ChronicaSaver(OWNER)  # (a saver lives as long as the app: kept here)
    graph = build(saver)
    for turn in range(30):
        graph.invoke(say(f"kept {turn}", turn), config("lg-kept"))
    del graph
    gc.collect()
    # (type(), not isinstance(): a dead weakref.proxy among the objects raises on that)
    live = [
        o
        for o in gc.get_objects()
        if type(o) is HumanMessage and str(o.content).startswith("kept ")
    ]
    assert len(live) <= 60
    assert len(saver.get_tuple(config("lg-kept")).checkpoint["channel_values"]["messages"]) == 60


def test_the_owner_comes_from_the_config_when_the_saver_names_none():
    saver = ChronicaSaver()
    converse(build(saver), user_id=OWNER)
    assert len(services.get_acta(OWNER, THREAD)) == 6
    with pytest.raises(EmptyOwnerID):
        build(saver).invoke(say("hi", 1), config("lg-thread-2"))
    with pytest.raises(EmptyOwnerID):
        saver.get_tuple(config(THREAD))
    assert saver.get_tuple(config(THREAD, user_id=OWNER)) is not None


def test_another_owners_thread_is_not_found_like_a_missing_one():
    converse(build(ChronicaSaver(OWNER)))
    theirs = ChronicaSaver(OTHER)
    assert theirs.get_tuple(config(THREAD)) is None
    assert theirs.get_tuple(config("no-such-thread")) is None
    assert list(theirs.list(config(THREAD))) == list(theirs.list(config("no-such-thread"))) == []
    assert list(theirs.list(None)) == []
    with pytest.raises(ChronicumNotFound):
        build(theirs).invoke(say("hello", 1), config(THREAD))
    theirs.delete_thread(THREAD)
    theirs.prune([THREAD], strategy="delete")
    assert len(services.get_acta(OWNER, THREAD)) == 6
    assert ChronicaSaver(OWNER).get_tuple(config(THREAD)) is not None


def test_deleting_the_chronicum_drops_the_threads_rows():
    saver = ChronicaSaver(OWNER)
    converse(build(saver))
    services.delete_chronicum(OWNER, THREAD)
    assert saver.get_tuple(config(THREAD)) is None
    assert not LangGraphMessage.objects.filter(thread_id=THREAD).exists()


def test_a_thread_deleted_and_written_again_is_read_afresh_by_the_same_saver():
    saver = ChronicaSaver(OWNER)
    graph = build(saver)
    converse(graph)
    services.delete_chronicum(OWNER, THREAD)
    graph.invoke(say("a new start", 9), config(THREAD))
    messages = graph.get_state(config(THREAD)).values["messages"]
    assert [m.content for m in messages] == ["a new start", "You said: a new start"]
    assert [a.content for a in services.get_acta(OWNER, THREAD)] == [
        "a new start",
        "You said: a new start",
    ]


def test_erase_owner_rows_deletes_one_owners_rows_and_counts_them():
    from chronica.integrations.langgraph import erase_owner_rows

    converse(build(ChronicaSaver(OWNER)))
    converse(build(ChronicaSaver(OTHER)), thread="lg-thread-other")
    counts = erase_owner_rows(OWNER)
    assert counts["chronica_langgraph_messages"] == 6
    assert counts["chronica_langgraph_checkpoints"] > 0
    assert set(counts) == {
        "chronica_langgraph_checkpoints",
        "chronica_langgraph_blobs",
        "chronica_langgraph_writes",
        "chronica_langgraph_messages",
        "chronica_langgraph_items",
    }
    assert ChronicaSaver(OWNER).get_tuple(config(THREAD)) is None
    assert ChronicaSaver(OTHER).get_tuple(config("lg-thread-other")) is not None
    assert erase_owner_rows(OWNER) == dict.fromkeys(counts, 0)


def test_erase_owner_erases_the_owners_threads_with_the_rest():
    converse(build(ChronicaSaver(OWNER)))
    converse(build(ChronicaSaver(OTHER)), thread="lg-thread-other")
    dry = services.erase_owner(OWNER, dry_run=True)
    assert dry.counts["chronica_langgraph_messages"] == 6
    assert ChronicaSaver(OWNER).get_tuple(config(THREAD)) is not None  # a dry run removes nothing
    erasure = services.erase_owner(OWNER, reason="asked to be forgotten")
    assert erasure.counts["chronica_langgraph_messages"] == 6
    assert erasure.counts["chronica_langgraph_checkpoints"] > 0
    assert ChronicaSaver(OWNER).get_tuple(config(THREAD)) is None
    assert not LangGraphBlob.objects.filter(owner_id=OWNER).exists()
    assert ChronicaSaver(OTHER).get_tuple(config("lg-thread-other")) is not None


def test_a_redacted_actum_empties_langgraphs_copy_of_its_message():
    saver = ChronicaSaver(OWNER)
    graph = build(saver)
    converse(graph)
    (asked,) = [a for a in services.get_acta(OWNER, THREAD) if a.content == "what is the weather?"]
    services.redact_actum(OWNER, THREAD, asked.id, reason="asked to forget it")
    stored = [bytes(m.blob) for m in LangGraphMessage.objects.filter(thread_id=THREAD)]
    assert stored
    assert not any(b"what is the weather?" in blob for blob in stored)
    messages = graph.get_state(config(THREAD)).values["messages"]
    assert messages[0].content == ""  # the saver forgot what it remembered
    assert [m.content for m in messages[1:]] == [
        m.content
        for m in ChronicaSaver(OWNER)
        .get_tuple(config(THREAD))
        .checkpoint["channel_values"]["messages"][1:]
    ]


def test_copy_thread_forks_the_session_and_the_copy_goes_on_by_itself():
    from chronica.integrations.langgraph.models import LangGraphMessage

    saver = ChronicaSaver(OWNER)
    graph = build(saver)
    converse(graph)
    saver.copy_thread(THREAD, "lg-copy")
    source, copy = services.get_acta(OWNER, THREAD), services.get_acta(OWNER, "lg-copy")
    assert [a.content for a in copy] == [a.content for a in source]
    # The copied message rows name the copied acta.
    named = {i for m in LangGraphMessage.objects.filter(thread_id="lg-copy") for i in m.actum_ids}
    assert named == {a.id for a in copy}
    assert graph.get_state(config("lg-copy")).values == graph.get_state(config(THREAD)).values
    graph.invoke(say("only in the copy", 3), config("lg-copy"))
    assert len(services.get_acta(OWNER, "lg-copy")) == 8
    assert len(services.get_acta(OWNER, THREAD)) == 6
    with pytest.raises(ChronicumNotFound):
        ChronicaSaver(OTHER).copy_thread(THREAD, "lg-stolen")
