"""A PydanticAI agent's turn in a session that other agents share: ``ChronicaHistory``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic_ai.agent import AgentRunResult
from pydantic_ai.messages import ModelMessage

from chronica import Actum, ChronicumNotFound, services

from .messages import actum_of, agent_name, message_of

if TYPE_CHECKING:
    from pydantic_ai import Agent

__all__ = ["ChronicaHistory"]


class ChronicaHistory:
    """A PydanticAI agent's turn in the chronicum ``chronicum_id``, a session that the
    person, the API and agents of other frameworks write into too::

        history = ChronicaHistory("dinner-friday", identity=search, agent=search_agent,
                                  window={"kinds": ["message"], "actor_kinds": ["human"]})
        result = await search_agent.run(None, message_history=await history.load())
        await history.save(result)

    :meth:`load` reads the agent's window (keyword arguments of ``services.get_acta``:
    ``kinds``, ``actor_kinds``, ``actors``, ``last_n``, ``max_tokens``,
    ``whole_tool_calls``) as PydanticAI messages (:func:`message_of`); :meth:`save`
    records the run's new messages as one batch, all or none, each under the agent's
    name (``agent``'s ``name``, else the model's) or the person's (``user_actor``,
    default the owner). With ``identity`` (an agent's credential) every rule of the
    credential holds, as in :class:`ChronicaConversationStore`; ``owner_id`` defaults to
    its owner. Unlike the conversation store it keeps no record: the chronicum is the
    whole history, so it needs no tables.
    """

    def __init__(
        self,
        chronicum_id: str,
        *,
        owner_id: str | None = None,
        identity: services.Identity | None = None,
        agent: Agent[Any, Any] | str | None = None,
        user_actor: str | None = None,
        window: dict[str, Any] | None = None,
    ) -> None:
        if owner_id is None:
            if identity is None:
                raise TypeError("ChronicaHistory needs an owner_id (or an identity)")
            owner_id = identity.owner_id
        window = dict(window or {})
        if unknown := set(window) - _WINDOW_OPTIONS:
            takes, given = ", ".join(sorted(_WINDOW_OPTIONS)), ", ".join(sorted(unknown))
            raise TypeError(f"window takes {takes}, not {given}")
        self.chronicum_id = chronicum_id
        self.owner_id = owner_id
        self.identity = identity
        self.agent = agent
        self.user_actor = owner_id if user_actor is None else user_actor
        self.window = window

    def __repr__(self) -> str:
        return f"<ChronicaHistory {self.chronicum_id!r} of {self.owner_id!r}>"

    @property
    def _calls(self) -> Any:
        return services if self.identity is None else services.acting_as(self.identity)

    async def load(self) -> list[ModelMessage]:
        """The agent's window of the chronicum, oldest first, as PydanticAI messages
        (``[]`` for a chronicum that does not exist, or is someone else's)."""
        try:
            acta = await self._calls.aget_acta(self.owner_id, self.chronicum_id, **self.window)
        except ChronicumNotFound:
            return []
        return [message_of(actum) for actum in acta]

    async def save(self, run: AgentRunResult[Any] | Sequence[ModelMessage]) -> list[Actum]:
        """Record a run's new messages (or ``messages``) as one batch; the acta stored."""
        messages = run.new_messages() if isinstance(run, AgentRunResult) else list(run)
        agent = self.identity if isinstance(self.identity, services.AgentIdentity) else None
        name = agent_name(self.agent)
        acta = [
            actum_of(m, self.chronicum_id, self.user_actor, agent, agent_name=name)
            for m in messages
        ]
        return await self._calls.arecord_acta(self.owner_id, acta)  # type: ignore[no-any-return]


_WINDOW_OPTIONS = frozenset(
    {"kinds", "actor_kinds", "actors", "last_n", "max_tokens", "whole_tool_calls"}
)
