"""OpenAI Agents SDK memory on chronica: :class:`ChronicaSession`.

``pip install "chronica[openai-agents]"``, then hand a session to the runner::

    from agents import Agent, Runner
    from chronica.integrations.openai_agents import ChronicaSession

    session = ChronicaSession("dinner-friday", owner_id="ardian")
    result = await Runner.run(concierge, "A quiet table for four?", session=session)

Every agent of the run, handoffs included, remembers into the one chronicum
``session_id`` of ``owner_id``; the admin, the API and agents of other frameworks
read the same acta. How an SDK item becomes an actum:

* one item is one actum, so the SDK's ``limit`` and chronica's ``last_n`` count
  the same thing, and a turn is recorded as one batch: it lands whole and
  contiguous, or not at all;
* ``data`` is the item itself, and :meth:`ChronicaSession.get_items` gives it back
  equal to what was added;
* ``kind``: a message is a message, reasoning and compaction are thoughts, a tool
  call (function, custom, computer, shell, MCP, hosted tools, an MCP approval
  request) is a tool request, its output (or approval answer) a tool response;
* ``call_id``: the item's ``call_id`` (an MCP approval pair is linked by its
  request's ID), so ``get_acta(whole_tool_calls=True)`` keeps calls and outputs
  together;
* ``actor``: a user message is ``user_actor`` (the owner by default); system and
  developer messages are system acta under their role; everything the model or
  its tools produced is the agent that ran: the runner saves each turn inside
  that agent's span of ``agents.tracing`` (kept even with tracing disabled), and
  the session reads the name there; outside a run it is ``default_agent``;
* ``content``: a readable projection of the item (the text, the tool name and
  arguments, the output), cut at :data:`CONTENT_LIMIT` characters, for people and
  for agents that read text.

An actum recorded by someone other than a ChronicaSession (the API, another
framework) has no SDK item in ``data``: it reads back as a plain message of its
content, so that an SDK agent sees what the others said.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Mapping
from typing import Any, TypeVar, cast

from agents.items import TResponseInputItem
from agents.memory.session_settings import (
    SessionSettings,
    coerce_session_settings,
    resolve_session_limit,
)
from agents.tracing import AgentSpanData, get_current_span

from ... import Actum, ChronicumNotFound, InvalidQuery, services
from .compaction import CompactionHooks, is_cleared
from .items import CONTENT_LIMIT, actor_name, actum_from_item, is_item, item_from_actum

__all__ = ["CONTENT_LIMIT", "ChronicaSession", "actum_from_item", "item_from_actum"]

_T = TypeVar("_T")

# What a session's window may filter by, as ``services.get_acta`` names it.
_WINDOW_OPTIONS = frozenset({"kinds", "actor_kinds", "actors", "max_tokens", "whole_tool_calls"})


class ChronicaSession(CompactionHooks):
    """An OpenAI Agents SDK ``Session`` whose history is the chronicum ``session_id``
    of ``owner_id``.

    ``get_items(limit)`` returns the last ``limit`` items, oldest first (``None``:
    ``session_settings.limit``, or all; ``0``: none); ``add_items`` records the
    items as one batch; ``pop_item`` removes and returns the newest item;
    ``clear_session`` deletes the chronicum only where all of it is this session's (else
    it hides the session's history; ``.compaction``, with the SDK's
    compaction hooks: one ``compact``, and the session reads the compacted window).

    The owner rule of chronica holds: a chronicum that belongs to someone else reads
    as empty, ``pop_item`` finds nothing in it and ``clear_session`` leaves it alone,
    exactly as for a chronicum that does not exist, and ``add_items`` raises
    ``ChronicumNotFound``. An item no chronica store can keep (not JSON, a NUL
    character, over ``CHRONICA["MAX_ACTUM_BYTES"]``) raises ``InvalidActum`` and
    nothing of the batch is written. A write that the caller cancels still settles
    (the batch lands whole or not at all) before the cancellation is raised.

    ``user_actor`` is the actor of user messages (default: ``owner_id``);
    ``default_agent`` the actor of model and tool items written outside a run.

    ``window``: the part of the chronicum the agent reads, as keyword arguments of
    ``services.get_acta`` (``kinds``, ``actor_kinds``, ``actors``, ``max_tokens``,
    ``whole_tool_calls``); ``limit`` still cuts it to the last items. Acta that other
    frameworks or the API recorded into the same chronicum read back as plain messages
    (:func:`item_from_actum`). A ``limit`` that is not an int is ``InvalidQuery``.

    ``identity``: where the session runs in an agent service, the agent's credential
    (``services.authenticate_credential(secret)``): every call then keeps its rules
    (it writes only as its agent, so a user item is ``NotPermitted``; ``pop_item`` and
    ``clear_session`` only if the credential allows them), ``owner_id`` defaults to
    the credential's owner, and the items it writes are attested
    (docs/agent-credentials.md).
    """

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        session_id: str,
        *,
        owner_id: str | None = None,
        session_settings: SessionSettings | Mapping[str, Any] | None = None,
        user_actor: str | None = None,
        default_agent: str = "assistant",
        identity: services.Identity | None = None,
        window: Mapping[str, Any] | None = None,
    ) -> None:
        window = dict(window or {})
        if unknown := set(window) - _WINDOW_OPTIONS:
            takes, given = ", ".join(sorted(_WINDOW_OPTIONS)), ", ".join(sorted(unknown))
            raise TypeError(f"window takes {takes}, not {given}")
        self.window = window
        if owner_id is None:
            if identity is None:
                raise TypeError("ChronicaSession needs an owner_id (or an identity)")
            owner_id = identity.owner_id
        self.session_id = session_id
        self.owner_id = owner_id
        self.identity = identity
        self.session_settings = (
            SessionSettings()
            if session_settings is None
            else coerce_session_settings(cast(Any, session_settings))
        )
        self.user_actor = owner_id if user_actor is None else user_actor
        self.default_agent = default_agent

    @property
    def _calls(self) -> Any:
        # The configured Chronicarius, acting as the identity if there is one.
        return services if self.identity is None else services.acting_as(self.identity)

    def __repr__(self) -> str:
        return f"<ChronicaSession {self.session_id!r} of {self.owner_id!r}>"

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The last ``limit`` items, oldest first, each as it was added."""
        resolved = resolve_session_limit(_limit(limit), self.session_settings)
        resolved = _limit(resolved)
        if resolved == 0:
            return []
        # Like the SDK's SQLiteSession, a negative limit is no limit.
        last_n = resolved if resolved is not None and resolved > 0 else 0
        try:
            acta = await self._calls.aget_acta(
                self.owner_id, self.session_id, last_n=last_n, compacted=True, **self.window
            )
        except ChronicumNotFound:
            return []
        return [item_from_actum(actum) for actum in acta if not is_cleared(actum)]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Record ``items`` as one batch: all land, one after the other, or none."""
        if not items:
            return
        agent = self._running_agent()
        acta = [
            actum_from_item(
                item,
                chronicum_id=self.session_id,
                user_actor=self.user_actor,
                agent=agent,
            )
            for item in items
        ]
        await _settled(self._calls.arecord_acta(self.owner_id, acta))

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the newest item; ``None`` when there is none."""
        newest = await self._view(last_n=1)
        if not newest or is_cleared(newest[0]):
            return None  # (the marker of a cleared history is no item, and stays)
        try:
            actum = await _settled(self._calls.apop_actum(self.owner_id, self.session_id))
        except ChronicumNotFound:
            return None
        return None if actum is None else item_from_actum(actum)

    async def clear_session(self) -> None:
        """Delete the chronicum and every item in it where all of them are this
        session's; else hide them from this session by a compaction of no items."""

        async def delete() -> None:
            with contextlib.suppress(ChronicumNotFound):
                await self._calls.adelete_chronicum(self.owner_id, self.session_id)

        await _settled(self._clear_or_hide(delete))

    def _to_actum(self, item: Any) -> Actum:
        agent = self._running_agent()
        return actum_from_item(
            item, chronicum_id=self.session_id, user_actor=self.user_actor, agent=agent
        )

    def _to_item(self, actum: Actum) -> TResponseInputItem:
        return item_from_actum(actum)

    def _is_own(self, actum: Actum) -> bool:
        return is_item(actum.data) or is_cleared(actum)

    def _running_agent(self) -> str:
        # The runner hands a session no agent (the run context it can pass carries none),
        # but it saves every turn while the span of the agent that ran it is current,
        # with tracing on or off.
        span = get_current_span()
        span_data = span.span_data if span is not None else None
        if isinstance(span_data, AgentSpanData):
            return actor_name(span_data.name, self.default_agent)
        return self.default_agent


def _limit(limit: object) -> int | None:
    if limit is None or (isinstance(limit, int) and not isinstance(limit, bool)):
        return limit
    raise InvalidQuery(f"limit must be an int or None, not {type(limit).__name__}")


async def _settled(awaitable: Awaitable[_T]) -> _T:
    """Await a write to its outcome even if the caller is cancelled meanwhile.

    The write runs in a thread that a cancellation cannot stop: returning early
    would let the caller believe nothing was written while the batch lands behind
    its back. The cancellation is raised once the outcome is known.
    """
    task = asyncio.ensure_future(awaitable)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError as exc:
            cancelled = cancelled or exc
    if cancelled is not None:
        if not task.cancelled():
            task.exception()  # retrieved, so that the loop does not log it as lost
        raise cancelled
    return task.result()
