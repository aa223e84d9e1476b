"""The store contract.

A store needs the seed's four methods (``Store``): ``create``, ``get``, ``record`` and
``acta``. With them alone it is a correct store: Chronicarius checks owners, cuts
windows and keeps the rules on top of it. ``record_idempotent`` makes it an
``IdempotentStore``.

Everything else is an optional ability: a method and a ``supports_*`` flag that says
the store has it (``BaseStore`` documents each and sets every flag to ``False``).
Chronicarius asks the flags once; a call that needs an ability the store lacks takes
the documented slower way or raises ``StoreUnsupported``. Every ability names the
owner first and checks it in the same step as it reads or writes, so that no delete
and re-create by another owner can come between the check and the work:

==================  ===========================================================
``supports_append``  ``append``: a batch, keyed or not, with state changes, into
                     the owner's chronicum (and create it if asked)
``supports_window``  ``window``: a page of the context window, and whether an
                     older page exists
``supports_listing`` ``list_chronica``
``supports_delete``  ``delete`` (only with ``supports_append`` and
                     ``supports_window``: a delete frees an ID for any owner)
``supports_pop``     ``pop``
``supports_follow``  ``acta_after`` (and ``subscribe``, to wake followers)
``supports_state``   ``read_state`` and ``list_namespace`` (written by ``append``)
``supports_fork``    ``fork``: a copy of a chronicum's acta up to one of them
``supports_compaction`` ``compact`` and ``ActaQuery.compacted`` in ``window`` and
                     ``acta_after``
==================  ===========================================================

Nobody has to inherit ``BaseStore``; a store that does gets ``record``,
``record_idempotent`` and ``acta`` from its ``append`` and ``window``, and
``on_commit`` that runs a callback at once. ``chronica.storeconformance`` has the
cases that specify each ability.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, Protocol, runtime_checkable

from .errors import StoreUnsupported
from .values import (
    ActaQuery,
    Actum,
    Chronicum,
    NamespaceListing,
    Recorded,
    StateChange,
    StateView,
)

__all__ = [
    "ABILITIES",
    "BaseStore",
    "Create",
    "FollowPage",
    "IdempotentStore",
    "Store",
    "Subscription",
    "WindowPage",
]

Create = Literal["missing", "new"]
"""What ``append`` may create: ``"missing"``, the chronicum for its owner when no one has
it (the seed's rule 5); ``"new"``, the chronicum, raising ``ChronicumExists`` when the ID
is taken by anyone."""

WindowPage = tuple[list[Actum], bool]
"""``window``'s answer: the acta, oldest first, and whether an older actum passes the
filters (the window's limits cut it off)."""

FollowPage = tuple[list[Actum], int, bool]
"""``acta_after``'s answer: the acta, oldest first; the position to read from next; and
whether more are ready now (the page was cut by its limit or byte budget)."""

ABILITIES = (
    "append",
    "window",
    "listing",
    "delete",
    "pop",
    "follow",
    "state",
    "fork",
    "compaction",
)
"""The optional abilities, as their ``supports_<name>`` flags name them."""


@runtime_checkable
class Store(Protocol):
    """Plain persistence for chronica and their acta. A store checks no owner and no actum.

    Promises (``chronica.storeconformance`` tests each of them):

    * ``create`` stores the chronicum as given; a taken ID raises ``ChronicumExists``.
      One ``create`` wins an ID, and nothing a plain store does changes its owner.
    * ``record`` appends the actum keeping its ``id``, sets ``at`` to the moment it
      writes, bumps the chronicum's ``last_activity_at`` to that same moment and
      returns the full stored actum. A missing chronicum raises ``ChronicumNotFound``.
      Concurrent calls all land, none twice.
    * ``acta`` returns the acta in the order ``record`` was called (never by ``at``),
      filtered by the query's filters first (``chronica.windows.passes``), then cut to
      the last ``query.last_n`` (``<= 0`` = all). A missing chronicum raises
      ``ChronicumNotFound``, never an empty list.
    * ``get`` returns the chronicum or raises ``ChronicumNotFound``.
    """

    def create(self, chronicum: Chronicum) -> None: ...

    def record(self, actum: Actum) -> Actum: ...

    def acta(self, chronicum_id: str, query: ActaQuery) -> list[Actum]: ...

    def get(self, chronicum_id: str) -> Chronicum: ...


@runtime_checkable
class IdempotentStore(Store, Protocol):
    """A store that records an actum at most once per key and chronicum.

    ``record_idempotent`` with a key already used in that chronicum returns the actum
    stored the first time and writes nothing (the stored actum wins, the new payload is
    discarded). Many concurrent calls with one key store exactly one actum and all of
    them return it.
    """

    def record_idempotent(self, actum: Actum, key: str) -> Actum: ...


class Subscription(Protocol):
    """Wake-ups for one follower of one chronicum."""

    async def wait(self, timeout: float) -> None:
        """Return once the chronicum may have new acta since the last ``wait``
        returned (or since the subscription began), or after ``timeout`` seconds."""

    def close(self) -> None: ...


class BaseStore:
    """The optional abilities of a store, each documented on its method, every flag
    ``False``. A store sets the flag of each ability it has and overrides its method."""

    supports_append = False
    supports_window = False
    supports_listing = False
    supports_delete = False
    supports_pop = False
    supports_follow = False
    supports_state = False
    supports_fork = False
    supports_compaction = False

    def create(self, chronicum: Chronicum) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define create()")

    def get(self, chronicum_id: str) -> Chronicum:
        raise NotImplementedError(f"{type(self).__name__} must define get()")

    # -- the seed's writes and window, from append and window ---------------------

    def record(self, actum: Actum) -> Actum:
        """``Store.record``, by ``append`` with no owner check."""
        return self._append_unchecked(actum, None)

    def record_idempotent(self, actum: Actum, key: str) -> Actum:
        """``IdempotentStore.record_idempotent``, by ``append`` with no owner check."""
        return self._append_unchecked(actum, key)

    def _append_unchecked(self, actum: Actum, key: str | None) -> Actum:
        from .errors import ChronicumNotFound

        recorded = self.append(None, actum.chronicum_id, [actum], key=key)
        if recorded is None:
            raise ChronicumNotFound(actum.chronicum_id)
        return recorded.acta[0]

    def acta(self, chronicum_id: str, query: ActaQuery) -> list[Actum]:
        """``Store.acta``, by ``window`` with no owner check."""
        from .errors import ChronicumNotFound

        page = self.window(None, chronicum_id, query)
        if page is None:
            raise ChronicumNotFound(chronicum_id)
        return page[0]

    # -- the abilities --------------------------------------------------------

    def append(
        self,
        owner_id: str | None,
        chronicum_id: str,
        acta: Sequence[Actum],
        *,
        key: str | None = None,
        tokens: Sequence[int | None] | None = None,
        state: Sequence[StateChange] = (),
        create: Create | None = None,
        credential: str | None = None,
    ) -> Recorded | None:
        """Append ``acta`` (all of ``chronicum_id``; may be empty when ``state`` is not)
        to the chronicum of ``owner_id``, the owner checked in the same step as the
        append (``None``: no check). ``None``, having written nothing, where the
        chronicum is missing or another owner's; ``create`` creates it first (see
        ``Create``) in the same step.

        The acta land all or none, one after the other in the given order with no other
        actum between them, every one with the same ``at`` (the moment of the write,
        also the chronicum's new ``last_activity_at``), keeping their IDs; the answer is
        ``Recorded(stored acta)``. With a ``key`` already used in that chronicum,
        nothing is written and the answer is ``Recorded(the acta that call stored, still
        there, replayed=True)``, read with the owner checked; if none are left, the
        write is done again. Many concurrent calls with one key store one batch.
        ``tokens[i]`` is the token count of ``acta[i]`` for ``max_tokens`` windows.

        ``state``: changes to state documents (``chronica.states.apply_all``) made in
        the same transaction, and not at all on a replay; an ``expect`` that does not
        hold, or a chronicum state in a namespace other than the chronicum's, is
        ``StateConflict`` with nothing written. Concurrent writes into one chronicum
        or one document apply one after the other.

        ``credential``: the key ID of the agent credential the write is made with. A
        store that keeps credentials checks in the same step that it is still valid
        (not revoked, not expired) and raises ``InvalidCredential``, writing nothing,
        where it is not; a store that keeps none ignores it."""
        raise StoreUnsupported(f"{type(self).__name__} cannot append (supports_append)")

    def window(
        self, owner_id: str | None, chronicum_id: str, query: ActaQuery
    ) -> WindowPage | None:
        """The context window of ``query`` and whether an older actum passes its
        filters, from one consistent read, the owner checked in it (``None`` where the
        chronicum is missing or another owner's; ``owner_id=None``: no check).

        Every field of ``ActaQuery`` holds: the filters first, then the newest acta
        that pass, at most ``last_n`` (``<= 0``: all), with ``max_tokens`` only as many
        as their token counts allow (the first that does not fit ends the window: an
        actum's count is the one ``append`` was given, else the default counter's
        estimate), with ``max_bytes`` only as many as the UTF-8 bytes of content and
        data allow (the newest always); ``before`` (an actum ID) takes the window from
        the acta recorded before it, ``InvalidQuery`` if it is not an actum of the
        chronicum; ``raw_data`` hands ``data`` back as ``chronica.RawJSON``."""
        raise StoreUnsupported(f"{type(self).__name__} has no windows (supports_window)")

    def list_chronica(self, owner_id: str, limit: int, after: Chronicum | None) -> list[Chronicum]:
        """The chronica of ``owner_id``, latest ``last_activity_at`` first, ties by ID,
        at most ``limit``, starting after ``after`` (the last of the previous page)."""
        raise StoreUnsupported(f"{type(self).__name__} cannot list (supports_listing)")

    def delete(self, owner_id: str, chronicum_id: str) -> bool:
        """Remove the chronicum of ``owner_id`` and every actum of it; ``False``,
        removing nothing, where it is missing or another owner's. A write racing with it
        lands before the delete (and goes with it) or after it, never with a database
        error. After a delete the ID is anyone's."""
        raise StoreUnsupported(f"{type(self).__name__} cannot delete (supports_delete)")

    def pop(self, owner_id: str, chronicum_id: str) -> Actum | None:
        """Remove and return the newest actum (in write order) of the chronicum of
        ``owner_id``, ``None`` if it has none; ``ChronicumNotFound`` where it is missing
        or another owner's. Two concurrent pops never return the same actum."""
        raise StoreUnsupported(f"{type(self).__name__} cannot pop (supports_pop)")

    def acta_after(
        self,
        owner_id: str,
        chronicum_id: str,
        query: ActaQuery,
        position: int | str | None,
        limit: int,
    ) -> FollowPage | None:
        """Read forward: the acta recorded after ``position`` that pass the filters of
        ``query``, oldest first, at most ``limit`` (with ``query.max_bytes``, only as many
        as fit it, the first always), and the position to read from next. ``None``, having
        read nothing, where the chronicum is missing or another owner's.

        A position is an int that grows with write order within a chronicum, and the
        acta of a chronicum become visible in position order, so a follower that goes
        on from the position it was given misses none. ``position`` may also be an
        actum ID (after that actum; ``InvalidQuery`` if it is not an actum of the
        chronicum) or ``None`` (no acta: the position of the newest now)."""
        raise StoreUnsupported(f"{type(self).__name__} cannot follow (supports_follow)")

    def subscribe(self, chronicum_id: str) -> Subscription | None:
        """Wake-ups for a follower of ``chronicum_id``, in the caller's event loop;
        ``None``: none here, the follower polls."""
        return None

    def read_state(
        self,
        owner_id: str,
        namespace: str,
        chronicum_id: str | None,
        query: ActaQuery | None,
    ) -> StateView:
        """In one consistent read: the chronicum of ``owner_id`` (when ``chronicum_id``
        is given; ``None`` where it is missing or another owner's) and its state in
        ``namespace``, ``owner_id``'s state and the namespace's state, and with a
        ``query`` the chronicum's window."""
        raise StoreUnsupported(f"{type(self).__name__} keeps no state (supports_state)")

    def list_namespace(self, owner_id: str | None, namespace: str) -> NamespaceListing:
        """The chronica whose state is in ``namespace`` (only ``owner_id``'s when given),
        with their state, oldest ``last_activity_at`` first, ties by owner then ID; the
        owner states of the owners listed; the namespace state."""
        raise StoreUnsupported(f"{type(self).__name__} keeps no state (supports_state)")

    def fork(
        self, owner_id: str, chronicum_id: str, through: str | None, new: Chronicum
    ) -> Chronicum | None:
        """Create ``new`` (a chronicum of ``owner_id``) holding copies of the acta of
        ``owner_id``'s ``chronicum_id`` up to and including the actum ``through`` (all of
        them for ``None``), in the same order, every field kept but a new ``id`` each
        (minted by the store, unguessable; ``compacts`` names the copy of its actum) and
        no idempotency key; the copies keep their token counts. One consistent read of
        the source. ``None``, writing nothing, where the source is missing or another
        owner's; ``ChronicumExists`` where ``new.id`` is taken; ``InvalidQuery`` where
        ``through`` is not an actum of the source. Answers the new chronicum as stored."""
        raise StoreUnsupported(f"{type(self).__name__} cannot fork (supports_fork)")

    def compact(
        self,
        owner_id: str | None,
        chronicum_id: str,
        acta: Sequence[Actum],
        through: str,
        *,
        key: str | None = None,
        tokens: Sequence[int | None] | None = None,
        credential: str | None = None,
    ) -> Recorded | None:
        """``append`` (never creating the chronicum) of ``acta`` as the compaction of
        every actum up to and including ``through``: each stored with ``compacts`` set to
        ``through``, all with one ``at`` later than that of every earlier compaction of
        the chronicum (a compaction's acta are the compaction acta of its moment).
        ``InvalidQuery``, writing nothing, where ``through`` is not an actum of the
        chronicum (checked in the same step as the write). A replay (``key``) answers
        as ``append`` does."""
        raise StoreUnsupported(f"{type(self).__name__} cannot compact (supports_compaction)")

    def on_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once the caller's transaction commits (at once when there is
        none), never after a rollback. Chronicarius sends its signals through it."""
        callback()
