"""No silent forks: two writers putting a checkpoint on the same parent of one thread,
in real threads on the real database. One wins; the other gets ``CheckpointConflict``
and nothing of its put stays (no checkpoint, no acta). LangGraph's own forks (time
travel, ``update_state`` on a past checkpoint) still branch."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connections
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint

from chronica import services
from chronica.integrations.langgraph import CheckpointConflict, ChronicaSaver

from .scenario import OWNER, build, config, say

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ROUNDS = 6


def race(*calls):
    """Run each call in its own thread (its own connection), all released at once;
    return what each returned or raised."""
    barrier = threading.Barrier(len(calls))

    def run(call):
        try:
            barrier.wait()
            return call()
        except Exception as exc:
            return exc
        finally:
            connections.close_all()

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


def writer(thread, text, turn, read):
    """A writer as a graph run is one: it reads the thread's newest checkpoint, waits
    until the other writer has read it too, then puts a child of it (one message)."""

    def write():
        saver = ChronicaSaver(OWNER)
        head = saver.get_tuple(config(thread))
        read.wait()
        checkpoint = empty_checkpoint()
        version = f"{turn:032}.{text}"
        checkpoint["channel_values"] = {
            "messages": [HumanMessage(content=text, id=f"m-{turn}-{text}")]
        }
        checkpoint["channel_versions"] = {"messages": version}
        return saver.put(
            head.config, checkpoint, {"source": "loop", "step": turn}, {"messages": version}
        )

    return write


def test_two_writers_on_one_parent_one_wins_the_other_is_told():
    saver = ChronicaSaver(OWNER)
    thread = "race-thread"
    head = saver.put(config(thread, checkpoint_ns=""), empty_checkpoint(), {"source": "input"}, {})
    for turn in range(1, ROUNDS + 1):
        read = threading.Barrier(2)
        outcomes = race(writer(thread, "left", turn, read), writer(thread, "right", turn, read))
        won = [o for o in outcomes if isinstance(o, dict)]
        lost = [o for o in outcomes if isinstance(o, CheckpointConflict)]
        assert (len(won), len(lost)) == (1, 1), outcomes
        head = won[0]
        # The thread's latest checkpoint is the winner's; the loser left nothing.
        assert saver.get_tuple(config(thread))[0] == head
        children = [t for t in saver.list(config(thread)) if t.parent_config]
        assert len(children) == turn
    acta = services.get_acta(OWNER, thread)
    assert len(acta) == ROUNDS  # one message per winning put, none of the losers'


def test_a_put_on_a_checkpoint_the_writer_was_given_branches():
    """Not a race: a put on a checkpoint that the writer did not read as the newest
    (LangGraph resuming or replaying from a checkpoint it was given)."""
    saver = ChronicaSaver(OWNER)
    thread = "branching"
    root = saver.put(config(thread, checkpoint_ns=""), empty_checkpoint(), {"source": "input"}, {})
    first = saver.put(root, empty_checkpoint(), {"source": "loop"}, {})
    second = ChronicaSaver(OWNER).put(root, empty_checkpoint(), {"source": "loop"}, {})
    assert first != second
    assert len(list(saver.list(config(thread)))) == 3


def test_two_runs_of_one_thread_at_once_never_both_succeed():
    thread = "race-graph"
    build(ChronicaSaver(OWNER)).invoke(say("hello", 0), config(thread))
    conflicts = 0
    for turn in range(1, ROUNDS + 1):
        outcomes = race(
            *(
                lambda text=text, turn=turn: build(ChronicaSaver(OWNER)).invoke(
                    {"messages": [HumanMessage(content=text, id=f"h-{turn}-{text}")]},
                    config(thread),
                )
                for text in ("left", "right")
            )
        )
        failures = [o for o in outcomes if isinstance(o, Exception)]
        assert all(isinstance(f, CheckpointConflict) for f in failures), failures
        assert len(failures) <= 1
        conflicts += len(failures)
    print(f"{conflicts} of {ROUNDS} races ended in a conflict")
    # Every run that succeeded is on the thread's one line of history.
    state = build(ChronicaSaver(OWNER)).get_state(config(thread))
    humans = [m for m in state.values["messages"] if isinstance(m, HumanMessage)]
    acta = services.get_acta(OWNER, thread)
    assert len([a for a in acta if a.actor_kind == "human"]) == len(humans)


def test_langgraphs_own_forks_still_branch():
    saver = ChronicaSaver(OWNER)
    graph = build(saver)
    thread = "time-travel"
    graph.invoke(say("first", 1), config(thread))
    graph.invoke(say("second", 2), config(thread))
    history = list(graph.get_state_history(config(thread)))
    past = next(s for s in history if len(s.values.get("messages", [])) == 2)
    # update_state on a past checkpoint: a fork beside the line that went on.
    forked = graph.update_state(
        past.config, {"messages": [AIMessage(content="a correction", id="fix-1")]}
    )
    assert graph.get_state(forked).values["messages"][-1].content == "a correction"
    # Running again from the past checkpoint (replay) branches too.
    graph.invoke(None, past.config)
    graph.invoke(say("third", 3), config(thread))
    assert graph.get_state(config(thread)).values["messages"][-1].content == "You said: third"


def test_a_sibling_the_run_put_itself_is_a_branch_not_a_conflict():
    """LangGraph's subgraphs sharing a namespace within one run can read the newest
    checkpoint before the run's own last put of it landed: their sibling is the run's
    own, a branch. Another run's sibling is a conflict (the tests above)."""
    from chronica.integrations.langgraph.runs import this_run

    saver = ChronicaSaver(OWNER)
    thread = "own-sibling"
    root = saver.put(config(thread, checkpoint_ns=""), empty_checkpoint(), {"source": "input"}, {})
    this_run().heads[(thread, "")] = root["configurable"]["checkpoint_id"]
    saver.put(root, empty_checkpoint(), {"source": "loop"}, {})
    # A read of the newest that came before that put landed:
    this_run().heads[(thread, "")] = root["configurable"]["checkpoint_id"]
    saver.put(root, empty_checkpoint(), {"source": "loop"}, {})
    assert len(list(saver.list(config(thread)))) == 3
