"""What each agent of the dinner reads back before its turn.

Each agent needs a different part of the session; the filters say which, and
``chronica.services.get_acta`` cuts it, owner check included.
"""

from dataclasses import dataclass

from chronica import ActorKind, Actum, ActumKind, services


@dataclass(frozen=True, kw_only=True)
class Agent:
    """An agent and the context window it asks chronica for."""

    name: str
    needs: str
    kinds: tuple[ActumKind, ...] = ()
    actor_kinds: tuple[ActorKind, ...] = ()
    last_n: int = 0

    def describe(self) -> str:
        """The window's options as a reader would pass them to ``get_acta``."""
        options = []
        if self.kinds:
            options.append("kinds=" + ",".join(self.kinds))
        if self.actor_kinds:
            options.append("actor_kinds=" + ",".join(self.actor_kinds))
        if self.last_n > 0:
            options.append(f"last_n={self.last_n}")
        return " ".join(options) or "everything"

    def window(self, owner_id: str, chronicum_id: str) -> list[Actum]:
        """This agent's context window of ``chronicum_id``, oldest first."""
        return services.get_acta(
            owner_id,
            chronicum_id,
            kinds=self.kinds,
            actor_kinds=self.actor_kinds,
            last_n=self.last_n,
        )


AGENTS = (
    Agent(
        name="concierge",
        needs="plans the evening: every message and thought, none of the raw tool traffic",
        kinds=(ActumKind.MESSAGE, ActumKind.THOUGHT),
    ),
    Agent(
        name="search",
        needs="finds places: what the person asked for, in their own words",
        kinds=(ActumKind.MESSAGE,),
        actor_kinds=(ActorKind.HUMAN,),
    ),
    Agent(
        name="booking",
        needs="holds the table: the last three messages",
        kinds=(ActumKind.MESSAGE,),
        last_n=3,
    ),
    Agent(
        name="reminder",
        needs="sets reminders: what the agents said, the latest five messages",
        kinds=(ActumKind.MESSAGE,),
        actor_kinds=(ActorKind.AGENT,),
        last_n=5,
    ),
)
