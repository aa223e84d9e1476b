"""The rules of chronica, in one place.

``Chronicarius`` enforces every rule of the contract on top of a plain store.
The module functions (``record_actum``, ``get_acta`` and the rest, with their
``a*`` twins) call a Chronicarius built once from ``settings.CHRONICA`` and
rebuilt when that setting changes. Only the module functions need Django
settings; ``Chronicarius`` itself works in any Python process.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import logging
import secrets
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Iterable, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar

from asgiref.sync import sync_to_async
from django.core.signals import setting_changed

from .errors import (
    ChronicumExists,
    ChronicumNotFound,
    IdempotencyUnsupported,
    InvalidQuery,
    StoreUnsupported,
)
from .follow import Polling, follow
from .interfaces import (
    AsyncStore,
    BatchStore,
    DeletingStore,
    FollowingStore,
    IdempotentStore,
    ListingStore,
    NotifyingStore,
    OwnerScopedStore,
    PagingStore,
    PoppingStore,
    StateStore,
    Store,
    TransactionalStore,
    WindowStore,
)
from .signals import actum_recorded, chronicum_deleted
from .tokens import estimate_tokens
from .validation import (
    DEFAULT_MAX_ACTUM_BYTES,
    build_query,
    check_after,
    check_batch,
    check_chronicum_id,
    check_identifier,
    check_listing,
    check_owner,
    check_state_changes,
    check_token_count,
    check_whole_tool_calls,
    normalize_key,
    storable,
)
from .values import (
    ActaPage,
    ActaQuery,
    ActorKind,
    Actum,
    ActumKind,
    ChronicaPage,
    Chronicum,
    NamespaceListing,
    Recorded,
    StateChange,
    StateView,
    restamped,
)
from .windows import cut_window, keep_whole_tool_calls

__all__ = [
    "Chronicarius",
    "Follower",
    "acreate_chronicum",
    "adelete_chronicum",
    "afollow",
    "aget_acta",
    "aget_acta_page",
    "aget_chronicum",
    "aget_state",
    "alist_chronica",
    "alist_chronica_page",
    "alist_namespace",
    "apop_actum",
    "arecord",
    "arecord_acta",
    "arecord_actum",
    "aupdate_state",
    "create_chronicum",
    "delete_chronicum",
    "get_acta",
    "get_acta_page",
    "get_chronicarius",
    "get_chronicum",
    "get_state",
    "list_chronica",
    "list_chronica_page",
    "list_namespace",
    "owner_id_for",
    "pop_actum",
    "record",
    "record_acta",
    "record_actum",
    "update_state",
]

logger = logging.getLogger("chronica")

Kinds = Iterable[ActumKind | str] | ActumKind | str | None
ActorKinds = Iterable[ActorKind | str] | ActorKind | str | None
TokenCounter = Callable[[Actum], int]

_P = ParamSpec("_P")
_R = TypeVar("_R")

# A write that finds its chronicum deleted under it creates it again and retries;
# only a delete after every one of these attempts lets ChronicumNotFound through.
_WRITE_ATTEMPTS = 5


def new_id() -> str:
    """32 lowercase hex characters from the system's secure random source."""
    return secrets.token_hex(16)


def _async_twin(
    method: Callable[Concatenate[Chronicarius, _P], _R],
) -> Callable[Concatenate[Chronicarius, _P], Awaitable[_R]]:
    """The ``a*`` twin of a Chronicarius method: the same call in a worker thread."""

    @functools.wraps(method)
    async def twin(self: Chronicarius, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        return await sync_to_async(method)(self, *args, **kwargs)

    twin.__name__ = f"a{method.__name__}"
    twin.__qualname__ = f"Chronicarius.a{method.__name__}"
    twin.__doc__ = f"Async twin of :meth:`{method.__name__}`."
    return twin


class Chronicarius:
    """The one object that enforces the rules; apps talk only to it.

    Every call names an owner. A chronicum that belongs to someone else answers
    ``ChronicumNotFound``, exactly like one that does not exist. Errors that are
    not chronica's own (a lost database connection) come back as they were raised.

    ``token_counter(actum) -> int`` counts an actum's tokens when it is recorded
    (default: :func:`chronica.tokens.estimate_tokens`); ``max_actum_bytes`` limits
    ``content`` plus the JSON of ``data`` (``None``: no limit); ``poll_interval`` is
    how many seconds a follower waits before it reads again when nothing woke it.
    """

    def __init__(
        self,
        store: Store,
        *,
        id_factory: Callable[[], str] | None = None,
        token_counter: TokenCounter | None = None,
        max_actum_bytes: int | None = DEFAULT_MAX_ACTUM_BYTES,
        poll_interval: float = 1.0,
    ) -> None:
        self.store = store
        self.id_factory = id_factory or new_id
        self.token_counter = token_counter or estimate_tokens
        self.max_actum_bytes = max_actum_bytes
        self.poll_interval = poll_interval
        self._batch = store if isinstance(store, BatchStore) else None
        self._idempotent = self._batch is not None or isinstance(store, IdempotentStore)
        self._scoped = store if isinstance(store, OwnerScopedStore) else None
        self._windows = isinstance(store, WindowStore) and bool(store.supports_windows)
        self._listing = store if isinstance(store, ListingStore) else None
        # A delete frees a chronicum ID for any owner: a store may delete only if its
        # writes and windows check the owner in the same step as they append or read.
        self._deleting = (
            store if isinstance(store, DeletingStore) and self._scoped is not None else None
        )
        self._popping = store if isinstance(store, PoppingStore) else None
        self._paging = (
            store
            if isinstance(store, PagingStore) and self._scoped is not None and self._windows
            else None
        )

        self._states = store if isinstance(store, StateStore) else None
        self._transactional = store if isinstance(store, TransactionalStore) else None
        self._following = store if isinstance(store, FollowingStore) else None
        self._notifying = store if isinstance(store, NotifyingStore) else None
        # Asked on the first a* call, not here: the answer may need Django's settings.
        self._native: AsyncStore | None = None
        self._native_asked = False

    def __repr__(self) -> str:
        return f"<Chronicarius store={self.store!r}>"

    # -- writing ---------------------------------------------------------

    def record(
        self,
        owner_id: str,
        acta: Sequence[Actum],
        *,
        idempotency_key: str | None = None,
        state: Sequence[StateChange] = (),
    ) -> Recorded:
        """The one write: record ``acta`` (a batch into one chronicum) for ``owner_id``.

        Every actum is validated before anything is written (``InvalidActum``); they
        land all or none, one after the other with no other actum between them. The
        chronicum is created for ``owner_id`` by its first write; every actum gets a
        new ID. With an ``idempotency_key`` already used in that chronicum, nothing
        is written and the acta stored the first time come back, with
        ``replayed=True``. An empty batch writes and creates nothing.

        ``state``: changes to state documents (``StateChange``) made in the same
        transaction as the acta, and not at all on a replay; an ``expect`` that does
        not hold is ``StateConflict`` with nothing written. It needs a ``StateStore``.
        """
        write = self._prepare(owner_id, acta, idempotency_key, state)
        return Recorded([]) if write is None else self._write(owner_id, write)

    def _prepare(
        self,
        owner_id: str,
        acta: Sequence[Actum],
        idempotency_key: str | None,
        state: Sequence[StateChange] = (),
    ) -> _Write | None:
        """A write checked and ready for the store; ``None`` for an empty batch."""
        check_owner(owner_id)
        key = normalize_key(idempotency_key)
        batch = check_batch(owner_id, acta, key, self.max_actum_bytes)
        changes = check_state_changes(state, self.max_actum_bytes) if state else []
        if changes:
            self._require(self._states, "keep state (it is not a StateStore)")
        if not batch:
            return None
        if key is not None and not self._idempotent:
            raise IdempotencyUnsupported(
                f"{type(self.store).__name__} does not implement IdempotentStore"
            )
        if len(batch) > 1 and self._batch is None:
            raise StoreUnsupported(
                f"{type(self.store).__name__} cannot record a batch (it is not a BatchStore)"
            )
        to_store = [restamped(actum, self.id_factory(), None) for actum in batch]
        tokens = [check_token_count(self.token_counter(actum), actum) for actum in to_store]
        return _Write(to_store, key, tokens, to_store[0].chronicum_id, changes)

    def _write(self, owner_id: str, write: _Write) -> Recorded:
        """Append ``write`` for ``owner_id``, the owner checked in the same step as the
        append: never into a chronicum that another owner created after this call last
        looked (a delete and a re-create can happen between any two statements)."""
        to_store, key, tokens = write.acta, write.key, write.tokens
        chronicum_id = write.chronicum_id
        scoped = self._scoped
        for _attempt in range(_WRITE_ATTEMPTS):
            if write.changes and self._states is not None:
                recorded = self._states.write_state(
                    owner_id, chronicum_id, to_store, key, tokens, write.changes, None
                )
                if recorded is None:
                    # The state it changes is a chronicum's that someone created with
                    # update_state(create=True): a write with state never creates one.
                    raise ChronicumNotFound(chronicum_id)
                return self._announce(owner_id, recorded)
            if scoped is not None:
                recorded = scoped.record_batch_if_owner(owner_id, to_store, key, tokens)
                if recorded is not None:
                    return self._announce(owner_id, recorded)
                # Missing, or someone else's: create it (ChronicumNotFound if it is
                # another owner's), then append again through the owner-checked write.
                self._own(owner_id, chronicum_id, create=True)
                continue
            # A store without the owner-checked write can delete nothing (Chronicarius
            # deletes only through an OwnerScopedStore), so the owner _own saw is the
            # chronicum's owner for good.
            self._own(owner_id, chronicum_id, create=True)
            try:
                recorded = self._store_batch(to_store, key, tokens)
            except ChronicumNotFound:
                continue  # gone since _own saw it: the next attempt creates it again
            return self._announce(owner_id, recorded)
        raise ChronicumNotFound(chronicum_id)

    def record_actum(
        self, owner_id: str, actum: Actum, *, idempotency_key: str | None = None
    ) -> Actum:
        """Record one actum and return it as stored (see :meth:`record`). With a key
        already used in the chronicum, the actum stored the first time comes back."""
        return self.record(owner_id, [actum], idempotency_key=idempotency_key).acta[0]

    def record_acta(
        self, owner_id: str, acta: Sequence[Actum], *, idempotency_key: str | None = None
    ) -> list[Actum]:
        """Record a batch and return it as stored (see :meth:`record`): all or none,
        contiguous, in the given order; a keyed replay returns the first batch."""
        return self.record(owner_id, acta, idempotency_key=idempotency_key).acta

    def _store_batch(
        self, acta: list[Actum], key: str | None, tokens: Sequence[int | None]
    ) -> Recorded:
        if self._batch is not None:
            return self._batch.record_batch(acta, key, tokens)
        (actum,) = acta
        if key is None:
            return Recorded([self.store.record(actum)])
        stored = self.store.record_idempotent(actum, key)  # type: ignore[attr-defined]
        # A store with only the original methods tells a replay by the ID it returns.
        return Recorded([stored], replayed=stored.id != actum.id)

    def _announce(self, owner_id: str, recorded: Recorded) -> Recorded:
        if not recorded.replayed and actum_recorded.has_listeners():
            acta = recorded.acta

            def send() -> None:
                for actum in acta:
                    _send(actum_recorded, owner_id=owner_id, actum=actum)

            self._after_commit(send)
        return recorded

    def _after_commit(self, callback: Callable[[], None]) -> None:
        if self._transactional is not None:
            self._transactional.on_commit(callback)
        else:
            callback()

    # -- reading ---------------------------------------------------------

    def get_acta(
        self,
        owner_id: str,
        chronicum_id: str,
        *,
        kinds: Kinds = None,
        actor_kinds: ActorKinds = None,
        last_n: int = 0,
        max_tokens: int | None = None,
        whole_tool_calls: bool = False,
        before: str | None = None,
    ) -> list[Actum]:
        """The context window, oldest first in write order.

        Filtered by ``kinds`` and ``actor_kinds`` first; then the newest acta that
        pass, at most ``last_n`` (``<= 0``: all) and, with ``max_tokens``, as many
        as add up to at most that many tokens (the first that does not fit ends
        the window). ``before`` (an actum ID of this chronicum) takes the window
        from the acta recorded before it. ``whole_tool_calls`` then leaves out every
        tool response whose tool request (same ``call_id``) is not in the window.
        A bad argument raises ``InvalidQuery``.
        """
        check_owner(owner_id)
        query = build_query(
            kinds=kinds,
            actor_kinds=actor_kinds,
            last_n=last_n,
            max_tokens=max_tokens,
            before=before,
        )
        whole = check_whole_tool_calls(whole_tool_calls)
        acta = self._window(owner_id, chronicum_id, query)
        return keep_whole_tool_calls(acta) if whole else acta

    def get_acta_page(
        self,
        owner_id: str,
        chronicum_id: str,
        *,
        kinds: Kinds = None,
        actor_kinds: ActorKinds = None,
        last_n: int = 0,
        max_tokens: int | None = None,
        whole_tool_calls: bool = False,
        before: str | None = None,
    ) -> ActaPage:
        """The window :meth:`get_acta` answers for the same arguments, and where the
        next, older page starts: ``ActaPage(acta, next_before)``.

        ``next_before`` is the oldest actum the limits kept (``whole_tool_calls``
        may leave it out of ``acta``), when an older actum passes the filters, else
        ``None``: ``get_acta_page(..., before=page.next_before)`` with the same
        arguments is the next page, and following them reads the session backwards,
        every actum once. An empty page has none (a budget that the newest actum
        alone is over ends the walk). Both come from one consistent read (where the
        store is a ``PagingStore``; every store of chronica is).
        """
        check_owner(owner_id)
        query = build_query(
            kinds=kinds,
            actor_kinds=actor_kinds,
            last_n=last_n,
            max_tokens=max_tokens,
            before=before,
        )
        whole = check_whole_tool_calls(whole_tool_calls)
        cut, more = self._page(owner_id, chronicum_id, query)
        page = keep_whole_tool_calls(cut) if whole else cut
        return ActaPage(page, cut[0].id if more else None)

    def _page(self, owner_id: str, chronicum_id: str, query: ActaQuery) -> tuple[list[Actum], bool]:
        if self._paging is not None:
            self._check_ids(owner_id, chronicum_id)
            found = self._paging.acta_page_if_owner(owner_id, chronicum_id, query)
            if found is None:
                raise ChronicumNotFound(chronicum_id)
            return found
        # Two reads: the window one actum longer (if that one comes, an older actum
        # passes), and where a budget may have cut it short, the actum before it.
        limit = query.last_n
        longer = dataclasses.replace(query, last_n=limit + 1) if limit else query
        cut = self._window(owner_id, chronicum_id, longer)
        if limit and len(cut) > limit:
            return cut[1:], True
        if not cut or query.max_tokens is None:
            return cut, False
        older = dataclasses.replace(query, last_n=1, max_tokens=None, before=cut[0].id)
        try:
            return cut, bool(self._window(owner_id, chronicum_id, older))
        except (ChronicumNotFound, InvalidQuery):
            # Deleted, or that actum popped, since the first read: the page as it was.
            return cut, False

    def _window(self, owner_id: str, chronicum_id: str, query: ActaQuery) -> list[Actum]:
        in_store = self._windows or (query.max_tokens is None and query.before is None)
        if self._scoped is not None and in_store:
            self._check_ids(owner_id, chronicum_id)
            acta = self._scoped.acta_if_owner(owner_id, chronicum_id, query)
            if acta is None:
                raise ChronicumNotFound(chronicum_id)
            return acta
        self._own(owner_id, chronicum_id)
        if in_store:
            return self.store.acta(chronicum_id, query)
        # A store that cannot cut the window itself: read the whole chronicum and cut
        # it here, counting tokens now (such a store kept no counts).
        return cut_window(self.store.acta(chronicum_id, ActaQuery()), query, self.token_counter)

    def get_chronicum(self, owner_id: str, chronicum_id: str) -> Chronicum:
        """Return the chronicum if it belongs to ``owner_id``, else ``ChronicumNotFound``."""
        check_owner(owner_id)
        return self._own(owner_id, chronicum_id)

    # -- the session lifecycle -------------------------------------------

    def create_chronicum(self, owner_id: str, chronicum_id: str | None = None) -> Chronicum:
        """Create an empty chronicum for ``owner_id``: with no ID, a new unguessable one
        from ``id_factory``. An ID that is taken, by anyone, raises ``ChronicumExists``."""
        check_owner(owner_id)
        check_identifier("owner_id", owner_id)
        chronicum_id = self.id_factory() if chronicum_id is None else chronicum_id
        check_chronicum_id(chronicum_id)
        now = dt.datetime.now(dt.UTC)
        chronicum = Chronicum(chronicum_id, owner_id, now, now)
        self.store.create(chronicum)
        return chronicum

    def list_chronica(
        self, owner_id: str, *, limit: int = 100, before: Chronicum | str | None = None
    ) -> list[Chronicum]:
        """The owner's chronica, latest ``last_activity_at`` first (ties by ID), at most
        ``limit`` (1 to 1000). ``before`` is the last chronicum of the previous page
        (or its ID), and the page starts after it."""
        return self._list(owner_id, limit, before, 0)

    def list_chronica_page(
        self, owner_id: str, *, limit: int = 100, before: Chronicum | str | None = None
    ) -> ChronicaPage:
        """The page :meth:`list_chronica` answers for the same arguments, and whether
        more follow it, from the same read: ``ChronicaPage(chronica, next_before)``,
        ``next_before`` the page's last chronicum when more follow, else ``None``."""
        found = self._list(owner_id, limit, before, 1)
        if len(found) > limit:
            return ChronicaPage(found[:limit], found[limit - 1])
        return ChronicaPage(found)

    def _list(
        self, owner_id: str, limit: int, before: Chronicum | str | None, more: int
    ) -> list[Chronicum]:
        """The page of ``list_chronica``, and ``more`` chronica after it."""
        check_owner(owner_id)
        limit, position = check_listing(limit, before)
        store = self._require(self._listing, "list chronica (it is not a ListingStore)")
        if not storable(owner_id):
            return []
        if isinstance(position, str):
            try:
                position = self._own(owner_id, position)
            except ChronicumNotFound:
                raise InvalidQuery(
                    f"before={position!r} is not a chronicum of this owner"
                ) from None
        return store.list_chronica(owner_id, limit + more, position)

    def delete_chronicum(self, owner_id: str, chronicum_id: str) -> None:
        """Delete the chronicum and all its acta. Someone else's, or a missing one,
        raises ``ChronicumNotFound``. A write racing with the delete lands before it
        (and goes with it) or after it, in the chronicum created again for its writer."""
        check_owner(owner_id)
        store = self._require(
            self._deleting,
            "delete a chronicum (only a DeletingStore that is an OwnerScopedStore can)",
        )
        self._check_ids(owner_id, chronicum_id)
        store.delete(chronicum_id, owner_id)
        if chronicum_deleted.has_listeners():
            self._after_commit(
                lambda: _send(chronicum_deleted, owner_id=owner_id, chronicum_id=chronicum_id)
            )

    # -- state beside the acta --------------------------------------------

    def update_state(
        self,
        owner_id: str,
        chronicum_id: str,
        state: Sequence[StateChange],
        *,
        create: bool = False,
    ) -> None:
        """Make ``state`` changes for a chronicum of ``owner_id`` (its own state, the
        owner's and the namespace's, as :meth:`record` does with acta), in one
        transaction. With ``create``, the chronicum is created in that transaction
        (``ChronicumExists`` if the ID is taken, by anyone); without, a missing one or
        someone else's is ``ChronicumNotFound``. ``StateConflict`` if an ``expect``
        does not hold; nothing is changed then."""
        check_owner(owner_id)
        check_identifier("owner_id", owner_id)
        changes = check_state_changes(state, self.max_actum_bytes)
        store = self._require(self._states, "keep state (it is not a StateStore)")
        fresh = None
        if create:
            check_chronicum_id(chronicum_id)
            now = dt.datetime.now(dt.UTC)
            fresh = Chronicum(chronicum_id, owner_id, now, now)
        else:
            self._check_ids(owner_id, chronicum_id)
        if store.write_state(owner_id, chronicum_id, [], None, [], changes, fresh) is None:
            raise ChronicumNotFound(chronicum_id)

    def get_state(
        self,
        owner_id: str,
        namespace: str,
        chronicum_id: str | None = None,
        *,
        acta: bool = False,
        last_n: int = 0,
    ) -> StateView:
        """The state ``owner_id`` may read in ``namespace``, in one consistent read: the
        chronicum ``chronicum_id`` of ``owner_id`` (``None`` if it is missing or someone
        else's, and then nothing of it) with its state, the owner's state and the
        namespace's; with ``acta``, the chronicum's window of the last ``last_n`` acta
        (``<= 0``: all)."""
        check_owner(owner_id)
        check_identifier("namespace", namespace)
        store = self._require(self._states, "keep state (it is not a StateStore)")
        query = build_query(last_n=last_n) if acta else None
        if chronicum_id is not None:
            try:
                self._check_ids(owner_id, chronicum_id)
            except ChronicumNotFound:
                chronicum_id = "\x00"  # no store holds such an ID: read the rest only
        view = store.read_state(owner_id, namespace, chronicum_id, query)
        return view

    def list_namespace(self, namespace: str, *, owner_id: str | None = None) -> NamespaceListing:
        """The chronica whose state is in ``namespace`` (only ``owner_id``'s when given),
        oldest activity first, each with its state; the owner states of their owners;
        the namespace state.

        Without ``owner_id`` this lists every owner's chronica of the namespace, as an
        agent framework's app-wide listing must (ADK's ``list_sessions`` without a
        user): call it only from the app's own code, never with a namespace a caller
        chose, and never to answer a request that only one owner's credentials made.
        """
        check_identifier("namespace", namespace)
        if owner_id is not None:
            check_owner(owner_id)
        store = self._require(self._states, "keep state (it is not a StateStore)")
        return store.list_namespace(namespace, owner_id)

    def pop_actum(self, owner_id: str, chronicum_id: str) -> Actum | None:
        """Remove and return the newest actum (in write order); ``None`` when the
        chronicum has none. Two concurrent pops never return the same actum."""
        check_owner(owner_id)
        store = self._require(self._popping, "pop an actum (it is not a PoppingStore)")
        self._check_ids(owner_id, chronicum_id)
        return store.pop(chronicum_id, owner_id)

    def afollow(
        self,
        owner_id: str,
        chronicum_id: str,
        *,
        after: str | None = None,
        kinds: Kinds = None,
        actor_kinds: ActorKinds = None,
    ) -> Follower:
        """Every actum recorded after the actum ``after`` (``None``: from the moment the
        follow starts), each once, in write order, filtered like :meth:`get_acta`,
        until the caller stops (``break``, or ``aclose()``): an async iterator.

        It starts at its first ``anext()``, or earlier, where the caller needs every
        check answered before it goes on (an HTTP stream before its first byte):
        ``await`` it, or call its ``start()`` from sync code, and it is returned
        started. Starting raises ``ChronicumNotFound`` as every call does, and
        ``InvalidQuery`` for a bad filter or an ``after`` that is not an actum of the
        chronicum; once started, only ``ChronicumNotFound`` comes, if the chronicum is
        deleted while followed. On PostgreSQL a NOTIFY sent by each committing write
        wakes the follower; elsewhere it reads again every
        ``CHRONICA["FOLLOW_POLL_INTERVAL"]`` seconds (``poll_interval``).
        """

        def checked() -> tuple[FollowingStore, ActaQuery, str | None]:
            check_owner(owner_id)
            query = build_query(kinds=kinds, actor_kinds=actor_kinds)
            resume = check_after(after)
            store = self._require(
                self._following, "follow a chronicum (it is not a FollowingStore)"
            )
            self._check_ids(owner_id, chronicum_id)
            return store, query, resume

        def position(found: int | None, resume: str | None) -> int:
            if found is None:
                raise ChronicumNotFound(chronicum_id)
            if resume is not None and not storable(resume):
                raise InvalidQuery(f"after={resume!r} is not an actum of this chronicum")
            return found

        def start() -> tuple[ActaQuery, int]:
            store, query, resume = checked()
            # An ID no store can hold is no actum of this chronicum, once the owner is
            # checked.
            asked = resume if resume is None or storable(resume) else None
            return query, position(store.follow_position(owner_id, chronicum_id, asked), resume)

        async def astart() -> tuple[ActaQuery, int]:
            store, query, resume = checked()
            native = self._async_store()
            position_of = (
                native.afollow_position
                if native is not None
                else sync_to_async(store.follow_position)
            )
            asked = resume if resume is None or storable(resume) else None
            return query, position(await position_of(owner_id, chronicum_id, asked), resume)

        def read_from(query: ActaQuery, position: int) -> AsyncGenerator[Actum, None]:
            # Subscribed before the first read: a write that commits after that read
            # wakes this follower; one before it is in it.
            news = self._notifying.subscribe(chronicum_id) if self._notifying else None
            native = self._async_store()
            store = self._following
            assert store is not None
            read = native.aacta_after if native is not None else sync_to_async(store.acta_after)
            return follow(
                chronicum_id,
                lambda position, limit: read(owner_id, chronicum_id, query, position, limit),
                position,
                news or Polling(),
                self.poll_interval,
            )

        return Follower(start, astart, read_from)

    def _require(self, capability: _R | None, what: str) -> _R:
        if capability is None:
            raise StoreUnsupported(f"{type(self.store).__name__} cannot {what}")
        return capability

    # -- async twins -----------------------------------------------------

    # On a store with an asyncio path of its own (DjangoStore on PostgreSQL), a write
    # into an existing chronicum of the owner, a window and a chronicum's lookup run
    # on it with no worker thread; anything else takes the sync way in a thread.

    def _async_store(self) -> AsyncStore | None:
        if not self._native_asked:
            store = self.store
            if isinstance(store, AsyncStore) and store.supports_async():
                self._native = store
            self._native_asked = True
        return self._native

    async def arecord(
        self,
        owner_id: str,
        acta: Sequence[Actum],
        *,
        idempotency_key: str | None = None,
        state: Sequence[StateChange] = (),
    ) -> Recorded:
        """Async twin of :meth:`record`."""
        native = self._async_store()
        if native is None or state:
            return await sync_to_async(self.record)(
                owner_id, acta, idempotency_key=idempotency_key, state=state
            )
        write = self._prepare(owner_id, acta, idempotency_key)
        if write is None:
            return Recorded([])
        recorded = await native.arecord_batch_if_owner(
            owner_id, write.acta, write.key, write.tokens
        )
        if recorded is None:
            # A first write, or someone else's chronicum: the long way decides.
            return await sync_to_async(self._write)(owner_id, write)
        if not recorded.replayed and actum_recorded.has_listeners():
            for actum in recorded.acta:
                await _asend(actum_recorded, owner_id=owner_id, actum=actum)
        return recorded

    async def arecord_actum(
        self, owner_id: str, actum: Actum, *, idempotency_key: str | None = None
    ) -> Actum:
        """Async twin of :meth:`record_actum`."""
        return (await self.arecord(owner_id, [actum], idempotency_key=idempotency_key)).acta[0]

    async def arecord_acta(
        self, owner_id: str, acta: Sequence[Actum], *, idempotency_key: str | None = None
    ) -> list[Actum]:
        """Async twin of :meth:`record_acta`."""
        return (await self.arecord(owner_id, acta, idempotency_key=idempotency_key)).acta

    async def aget_acta(
        self,
        owner_id: str,
        chronicum_id: str,
        *,
        kinds: Kinds = None,
        actor_kinds: ActorKinds = None,
        last_n: int = 0,
        max_tokens: int | None = None,
        whole_tool_calls: bool = False,
        before: str | None = None,
    ) -> list[Actum]:
        """Async twin of :meth:`get_acta`."""
        check_owner(owner_id)
        query = build_query(
            kinds=kinds,
            actor_kinds=actor_kinds,
            last_n=last_n,
            max_tokens=max_tokens,
            before=before,
        )
        whole = check_whole_tool_calls(whole_tool_calls)
        native = self._async_store()
        if native is None or self._scoped is None or not self._windows:
            acta = await sync_to_async(self._window)(owner_id, chronicum_id, query)
        else:
            self._check_ids(owner_id, chronicum_id)
            found = await native.aacta_if_owner(owner_id, chronicum_id, query)
            if found is None:
                raise ChronicumNotFound(chronicum_id)
            acta = found
        return keep_whole_tool_calls(acta) if whole else acta

    async def aget_chronicum(self, owner_id: str, chronicum_id: str) -> Chronicum:
        """Async twin of :meth:`get_chronicum`."""
        native = self._async_store()
        if native is None:
            return await sync_to_async(self.get_chronicum)(owner_id, chronicum_id)
        check_owner(owner_id)
        self._check_ids(owner_id, chronicum_id)
        chronicum = await native.aget(chronicum_id)
        if chronicum.owner_id != owner_id:
            raise ChronicumNotFound(chronicum_id)
        return chronicum

    aget_acta_page = _async_twin(get_acta_page)

    aupdate_state = _async_twin(update_state)
    aget_state = _async_twin(get_state)
    alist_namespace = _async_twin(list_namespace)
    acreate_chronicum = _async_twin(create_chronicum)
    alist_chronica = _async_twin(list_chronica)
    alist_chronica_page = _async_twin(list_chronica_page)
    adelete_chronicum = _async_twin(delete_chronicum)
    apop_actum = _async_twin(pop_actum)

    # -- ownership -------------------------------------------------------

    @staticmethod
    def _check_ids(owner_id: str, chronicum_id: str) -> None:
        for name, value in (("owner_id", owner_id), ("chronicum_id", chronicum_id)):
            if not isinstance(value, str):
                raise InvalidQuery(f"{name} must be a string, not {type(value).__name__}")
        if not (storable(owner_id) and storable(chronicum_id)):
            # No store can hold such an ID, so no such chronicum exists.
            raise ChronicumNotFound(chronicum_id)

    def _own(self, owner_id: str, chronicum_id: str, *, create: bool = False) -> Chronicum:
        """The chronicum, if it is ``owner_id``'s; with ``create``, a missing one is
        created for ``owner_id`` first."""
        self._check_ids(owner_id, chronicum_id)
        try:
            chronicum = self.store.get(chronicum_id)
        except ChronicumNotFound:
            if not create:
                raise
            now = dt.datetime.now(dt.UTC)
            chronicum = Chronicum(chronicum_id, owner_id, now, now)
            try:
                self.store.create(chronicum)
            except ChronicumExists:
                # Someone created it first: if it was this owner (two first
                # writes racing), record anyway; if not, it is not ours.
                chronicum = self.store.get(chronicum_id)
        if chronicum.owner_id != owner_id:
            raise ChronicumNotFound(chronicum_id)
        return chronicum


class Follower(AsyncGenerator[Actum, None]):
    """What :meth:`Chronicarius.afollow` returns: the acta recorded after its start,
    as an async iterator, started by its first ``anext()``, by ``await``, or by
    ``start()``. Close it (``aclose()``, ``break`` out of ``async for``, or
    ``contextlib.aclosing``)."""

    def __init__(
        self,
        start: Callable[[], tuple[ActaQuery, int]],
        astart: Callable[[], Awaitable[tuple[ActaQuery, int]]],
        read_from: Callable[[ActaQuery, int], AsyncGenerator[Actum, None]],
    ) -> None:
        self._start, self._astart, self._read_from = start, astart, read_from
        self._from: tuple[ActaQuery, int] | None = None
        self._acta: AsyncGenerator[Actum, None] | None = None
        self._done = False

    def start(self) -> Follower:
        """Run every check and take the position to follow from now, in sync code;
        the follower is then read in any event loop."""
        if self._from is None and not self._done:
            self._from = self._started(self._start)
        return self

    def __await__(self) -> Generator[Any, None, Follower]:
        return self._astarted().__await__()

    async def _astarted(self) -> Follower:
        if self._from is None and not self._done:
            try:
                self._from = await self._astart()
            except BaseException:
                self._done = True
                raise
        return self

    def _started(self, start: Callable[[], tuple[ActaQuery, int]]) -> tuple[ActaQuery, int]:
        try:
            return start()
        except BaseException:
            self._done = True
            raise

    async def __anext__(self) -> Actum:
        if self._acta is None:
            await self._astarted()
            if self._done or self._from is None:
                raise StopAsyncIteration
            self._acta = self._read_from(*self._from)
        return await self._acta.__anext__()

    async def asend(self, value: None) -> Actum:
        return await self.__anext__()

    async def athrow(self, *args: Any) -> Actum:
        if self._acta is None:
            self._done = True
            raise args[1] if len(args) > 1 and args[1] is not None else args[0]
        return await self._acta.athrow(*args)

    async def aclose(self) -> None:
        self._done = True
        acta, self._acta = self._acta, None
        if acta is not None:
            await acta.aclose()


@dataclasses.dataclass(frozen=True)
class _Write:
    """A write checked and ready for the store: new IDs, the key, token counts."""

    acta: list[Actum]
    key: str | None
    tokens: list[int]
    chronicum_id: str
    changes: list[StateChange] = dataclasses.field(default_factory=list)


async def _asend(signal: Any, **kwargs: Any) -> None:
    # As _send; sync receivers run in a thread, async ones are awaited.
    try:
        await signal.asend_robust(sender=Chronicarius, **kwargs)
    except Exception:
        logger.exception("chronica: sending %s failed", signal.name)


def _send(signal: Any, **kwargs: Any) -> None:
    # A receiver that fails must not undo or un-acknowledge a write that has
    # committed: the signal logs each failing receiver and runs the others.
    try:
        signal.send_robust(sender=Chronicarius, **kwargs)
    except Exception:
        logger.exception("chronica: sending %s failed", signal.name)


# -- the configured Chronicarius ------------------------------------------

_lock = threading.Lock()
_configured: Chronicarius | None = None


def get_chronicarius() -> Chronicarius:
    """The Chronicarius built from ``settings.CHRONICA``, built once and cached."""
    global _configured
    chronicarius = _configured
    if chronicarius is None:
        with _lock:
            if _configured is None:
                from .conf import chronica_settings

                _configured = Chronicarius(
                    chronica_settings.build_store(),
                    token_counter=chronica_settings.token_counter(),
                    max_actum_bytes=chronica_settings.MAX_ACTUM_BYTES,
                    poll_interval=chronica_settings.FOLLOW_POLL_INTERVAL,
                )
            chronicarius = _configured
    return chronicarius


def reset_chronicarius() -> None:
    """Forget the cached Chronicarius; the next call builds it from settings again."""
    global _configured
    with _lock:
        _configured = None


def _on_setting_changed(*, setting: str, **kwargs: Any) -> None:
    if setting == "CHRONICA":
        reset_chronicarius()


setting_changed.connect(_on_setting_changed, dispatch_uid="chronica.services.setting_changed")


def owner_id_for(user: Any) -> str:
    """The owner ID of a Django user: ``CHRONICA["OWNER_ID"](user)`` (default
    ``str(user.pk)``). The API, views, tasks and agents all map users to owners
    through this one function. An anonymous user has none: ``EmptyOwnerID``."""
    from .conf import chronica_settings
    from .errors import EmptyOwnerID

    if user is None or not getattr(user, "is_authenticated", True):
        raise EmptyOwnerID("an anonymous user has no owner ID")
    owner_id = chronica_settings.owner_id_function()(user)
    if not isinstance(owner_id, str):
        raise TypeError(f"CHRONICA['OWNER_ID'] returned {type(owner_id).__name__}, not a str")
    return owner_id


def _on_configured(
    method: Callable[Concatenate[Chronicarius, _P], _R],
) -> Callable[_P, _R]:
    """A module function: ``method`` of the configured Chronicarius."""
    name = method.__name__

    @functools.wraps(method)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        return getattr(get_chronicarius(), name)(*args, **kwargs)  # type: ignore[no-any-return]

    call.__doc__ = f":meth:`Chronicarius.{name}` on the configured store."
    return call


def _on_configured_async(
    method: Callable[Concatenate[Chronicarius, _P], Awaitable[_R]],
) -> Callable[_P, Awaitable[_R]]:
    """An async module function: ``method`` of the configured Chronicarius."""
    name = method.__name__

    @functools.wraps(method)
    async def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        return await getattr(get_chronicarius(), name)(*args, **kwargs)  # type: ignore[no-any-return]

    call.__doc__ = f":meth:`Chronicarius.{name}` on the configured store."
    return call


record = _on_configured(Chronicarius.record)
record_actum = _on_configured(Chronicarius.record_actum)
record_acta = _on_configured(Chronicarius.record_acta)
get_acta = _on_configured(Chronicarius.get_acta)
get_acta_page = _on_configured(Chronicarius.get_acta_page)
get_chronicum = _on_configured(Chronicarius.get_chronicum)
create_chronicum = _on_configured(Chronicarius.create_chronicum)
list_chronica = _on_configured(Chronicarius.list_chronica)
list_chronica_page = _on_configured(Chronicarius.list_chronica_page)
delete_chronicum = _on_configured(Chronicarius.delete_chronicum)
pop_actum = _on_configured(Chronicarius.pop_actum)
update_state = _on_configured(Chronicarius.update_state)
get_state = _on_configured(Chronicarius.get_state)
list_namespace = _on_configured(Chronicarius.list_namespace)
arecord = _on_configured_async(Chronicarius.arecord)
arecord_actum = _on_configured_async(Chronicarius.arecord_actum)
arecord_acta = _on_configured_async(Chronicarius.arecord_acta)
aget_acta = _on_configured_async(Chronicarius.aget_acta)
aget_acta_page = _on_configured_async(Chronicarius.aget_acta_page)
aget_chronicum = _on_configured_async(Chronicarius.aget_chronicum)
acreate_chronicum = _on_configured_async(Chronicarius.acreate_chronicum)
alist_chronica = _on_configured_async(Chronicarius.alist_chronica)
alist_chronica_page = _on_configured_async(Chronicarius.alist_chronica_page)
adelete_chronicum = _on_configured_async(Chronicarius.adelete_chronicum)
apop_actum = _on_configured_async(Chronicarius.apop_actum)
aupdate_state = _on_configured_async(Chronicarius.aupdate_state)
aget_state = _on_configured_async(Chronicarius.aget_state)
alist_namespace = _on_configured_async(Chronicarius.alist_namespace)
afollow = _on_configured(Chronicarius.afollow)
