"""What a database can do for chronica, as flags its dialect carries (``dialect.features``),
as Django's ``connection.features`` are for a backend: code outside the dialects asks
these, never ``connection.vendor``."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

__all__ = ["Features"]


@dataclasses.dataclass(frozen=True)
class Features:
    lists_as_array: bool = False
    """A list of values travels as one parameter as an array, compared with ``= ANY``
    (PostgreSQL); elsewhere as a JSON array read with ``json_each`` (SQLite)."""
    replicas: bool = False
    """Replicas report how far they replayed the primary's log (PostgreSQL's WAL
    positions): ``READ_DATABASES`` reads wait for a write to reach them."""
    search_index_built: bool = False
    """The search index is an index the ``chronica_search --build-index`` command
    builds (PostgreSQL's GIN); elsewhere the database keeps it with triggers."""

    @property
    def in_list(self) -> str:
        """The condition that compares a column with a list given as one parameter."""
        return "= ANY(%s)" if self.lists_as_array else "IN (SELECT value FROM json_each(%s))"

    def listed(self, values: list[Any]) -> Any:
        """``values`` as the one parameter of :attr:`in_list`."""
        return list(values) if self.lists_as_array else json.dumps(values)
