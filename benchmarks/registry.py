"""Every case of ``make bench``, by name: what it measures and how it runs.

A case is a function of the run's :class:`Run` that returns its rows (and may add a query
plan to ``run.plans``). Each imports its module when it runs, so that ``--only http`` needs
neither LangChain nor the agent frameworks. Adding a case is one entry here and its module.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .floor import Floor
    from .report import Row


@dataclasses.dataclass
class Run:
    """What every case of one run shares: the sizes of its rounds, the floor's connection,
    and the plans printed under the table."""

    quick: bool
    load: bool
    floor: Floor | None = None
    conninfo: str = ""
    plans: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def ops(self) -> int:
        """Operations per round: short rounds, many of them, share the noise of the moment."""
        return 100

    @property
    def n_rounds(self) -> int:
        return 5 if self.quick else 61


@dataclasses.dataclass(frozen=True)
class Case:
    run: Callable[[Run], list[Row]]
    floor: bool = False
    """Needs the psycopg floor (``run.floor``) open."""
    sqlite: bool = False
    """Also runs on a SQLite file (``CHRONICA_BENCH_DB=sqlite``)."""


def _record(run: Run) -> list[Row]:
    from . import cases

    assert run.floor is not None
    return cases.record(run.floor, run.conninfo, ops=run.ops, n_rounds=run.n_rounds)


def _window(run: Run) -> list[Row]:
    from . import cases

    assert run.floor is not None
    return cases.window(run.floor, ops=run.ops, n_rounds=run.n_rounds)


def _batch(run: Run) -> list[Row]:
    from .batch import batch

    assert run.floor is not None
    return batch(run.floor, run.conninfo, ops=run.ops, n_rounds=run.n_rounds)


def _growth(run: Run) -> list[Row]:
    from . import cases

    rows, run.plans["window plan on the 1M session (last_n=20)"] = cases.growth(
        ops=run.ops, n_rounds=run.n_rounds
    )
    return rows


def _budget(run: Run) -> list[Row]:
    from . import budget

    title = "budgeted window plan on the 1M session (max_tokens=8000)"
    rows, run.plans[title] = budget.growth(ops=run.ops, n_rounds=run.n_rounds)
    return rows


def _langchain(run: Run) -> list[Row]:
    from . import budget

    return budget.langchain(n_rounds=5 if run.quick else 21)


def _listing(run: Run) -> list[Row]:
    from .lifecycle import listing

    title = "listing plan, page 51 of the owner of 10,000"
    rows, run.plans[title] = listing(ops=run.ops, n_rounds=run.n_rounds)
    return rows


def _concurrency(run: Run) -> list[Row]:
    from . import cases

    return cases.concurrency(run.conninfo, ops=150, reps=3 if run.quick else 5)


def _delete(run: Run) -> list[Row]:
    from .lifecycle import delete

    return delete(run.conninfo, reps=1 if run.quick else 3)


def _memory(run: Run) -> list[Row]:
    from . import cases

    return cases.memory()


def _tokens(run: Run) -> list[Row]:
    from . import cases

    return cases.estimate()


def _agents(run: Run) -> list[Row]:
    from . import openai_agents

    return openai_agents.run(quick=run.quick, load=run.load)


def _pydantic_ai(run: Run) -> list[Row]:
    from . import pydantic_ai

    return pydantic_ai.measure(ops=run.ops, n_rounds=run.n_rounds, reload=run.load)


def _asyncio(run: Run) -> list[Row]:
    from .async_path import async_path

    return async_path(ops=run.ops, n_rounds=5 if run.quick else 11)


def _follow(run: Run) -> list[Row]:
    from .follow import follow

    return follow()


def _follow_scale(run: Run) -> list[Row]:
    from .follow_scale import follow_scale

    return follow_scale()


def _google_adk(run: Run) -> list[Row]:
    from . import google_adk

    return google_adk.run(quick=run.quick, load=run.load)


def _attack(run: Run) -> list[Row]:
    from . import attack

    return attack.run()


def _attested(run: Run) -> list[Row]:
    from .attested import attested

    return attested(ops=run.ops, n_rounds=run.n_rounds)


def _compaction(run: Run) -> list[Row]:
    from . import compaction

    return compaction.run(quick=run.quick)


def _search(run: Run) -> list[Row]:
    from . import search

    return search.measure(quick=run.quick, load=run.load)


def _forgetting(run: Run) -> list[Row]:
    from .forgetting import forgetting

    return forgetting(ops=run.ops, n_rounds=5 if run.quick else 21, quick=run.quick)


def _langgraph(run: Run) -> list[Row]:
    from . import langgraph

    return langgraph.measure(quick=run.quick)


def _http(run: Run) -> list[Row]:
    from . import http

    return http.run(quick=run.quick)


CASES: dict[str, Case] = {
    "record": Case(_record, floor=True),
    "window": Case(_window, floor=True),
    "batch": Case(_batch, floor=True),
    "growth": Case(_growth),
    "budget": Case(_budget),
    "langchain": Case(_langchain),
    "listing": Case(_listing),
    "concurrency": Case(_concurrency),
    "delete": Case(_delete),
    "memory": Case(_memory),
    "tokens": Case(_tokens, sqlite=True),
    "agents": Case(_agents),
    "pydantic-ai": Case(_pydantic_ai),
    "asyncio": Case(_asyncio),
    "follow": Case(_follow),
    "follow-scale": Case(_follow_scale),
    "google-adk": Case(_google_adk),
    "attack": Case(_attack),
    "attested": Case(_attested),
    "http": Case(_http, sqlite=True),
    "compaction": Case(_compaction),
    "search": Case(_search),
    "forgetting": Case(_forgetting),
    "langgraph": Case(_langgraph),
}
"""In the order they run: the floor's cases first, while its connection is warm."""
