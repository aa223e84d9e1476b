"""Search across an owner's chronica: recall what was said in any session."""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import InvalidQuery
from ..search import parse_query
from ..validation.identifiers import check_owner, storable
from ..validation.queries import _integer, build_query
from ..values import SearchHit
from .base import ActorKinds, ChronicariusBase, Kinds, async_twin
from .identity import AgentIdentity

__all__ = ["MAX_SEARCH_LIMIT", "Search"]

MAX_SEARCH_LIMIT = 1000
"""The most hits one search answers (``limit``), and the furthest it reads (``offset``
plus ``limit``)."""


class Search(ChronicariusBase):
    """Search over every chronicum of an owner."""

    def search_acta(
        self,
        owner_id: str,
        query: str,
        *,
        chronica: Iterable[str] | str | None = None,
        kinds: Kinds = None,
        actor_kinds: ActorKinds = None,
        actors: Iterable[str] | str | None = None,
        limit: int = 20,
        offset: int = 0,
        namespace: str | None = None,
    ) -> list[SearchHit]:
        """The acta of ``owner_id``'s chronica that match ``query``, best first (ties:
        the newest first), as ``SearchHit(actum, rank, snippet)``.

        ``query`` is words (all must match), ``"quoted phrases"``, ``or`` and
        ``-word`` (``chronica.search``); an actum's text is its ``content`` and the
        strings inside its ``data``. ``chronica`` (chronicum IDs), ``kinds``,
        ``actor_kinds``, ``actors`` and ``namespace`` (only the chronica whose state is in
        it, as an agent framework's sessions are) narrow it; ``limit`` (1 to 1000) hits from the
        ``offset``-th on. Only the owner's acta are searched, and with an agent's
        credential only those of the chronica it names, both checked in the store's
        one read. An empty or wordless query is ``ValueError``; another bad argument
        ``InvalidQuery``; a store without search ``StoreUnsupported``.
        """
        check_owner(owner_id)
        parsed = parse_query(query)
        filters = build_query(kinds=kinds, actor_kinds=actor_kinds, actors=actors)
        limit, offset = _integer("limit", limit), _integer("offset", offset)
        if not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise InvalidQuery(f"limit must be from 1 to {MAX_SEARCH_LIMIT}, not {limit}")
        if not 0 <= offset <= MAX_SEARCH_LIMIT - limit:
            raise InvalidQuery(f"offset plus limit must be at most {MAX_SEARCH_LIMIT}")
        named = _chronica(chronica)
        if namespace is not None and not isinstance(namespace, str):
            raise InvalidQuery(f"namespace must be a string, not {type(namespace).__name__}")
        store = self._require(self._searching, "search", "supports_search")
        self._admit(owner_id)
        identity = self.identity
        if isinstance(identity, AgentIdentity) and identity.chronica is not None:
            # A credential limited to named chronica searches only those.
            named = identity.chronica if named is None else named & identity.chronica
        if not storable(owner_id) or named == frozenset():
            return []
        return store.search(
            owner_id,
            parsed,
            filters,
            chronica=named,
            limit=limit,
            offset=offset,
            namespace=namespace,
        )

    asearch_acta = async_twin(search_acta)


def _chronica(chronica: Iterable[str] | str | None) -> frozenset[str] | None:
    if chronica is None:
        return None
    if isinstance(chronica, str):
        chronica = (chronica,)
    named = set()
    for chronicum_id in chronica:
        if not isinstance(chronicum_id, str):
            raise InvalidQuery(f"chronica must be chronicum IDs, not {type(chronicum_id).__name__}")
        if storable(chronicum_id):  # one no store can hold finds nothing
            named.add(chronicum_id)
    return frozenset(named)
