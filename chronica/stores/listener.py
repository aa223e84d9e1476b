"""PostgreSQL: how a write wakes the followers of its chronicum, both ends of it: the
NOTIFY protocol the writes follow, and the one LISTEN connection per process and
database that receives it (``listen``).

**The protocol.** A write into a chronicum that some process follows sends NOTIFY on
the channel ``chronica``, with the chronicum's ID as payload (never an actum's
content), inside the writing transaction: only a commit wakes a follower, once the
acta are visible.

Only when followed: PostgreSQL serializes the commits of all notifying transactions
of a database (the notification queue's lock is held until the commit is flushed),
which costs concurrent writes dearly (BENCHMARKS.md, case concurrency). A process that
follows a chronicum holds, on its LISTEN connection, a shared advisory lock
(``FOLLOWED``, hashtext(id)). A write tries to take that lock exclusively until it
commits (``pg_try_advisory_xact_lock``: transaction-scoped, so nothing stays on a
pooled connection): if it can, nobody follows and it sends nothing; if it cannot, it
sends the NOTIFY. A listener gets its shared lock only once every write that sent none
has committed, and then wakes its followers, who read those writes. (The writes of a
chronicum are already serialized by its row lock; two chronica whose IDs hash alike
only cost an extra NOTIFY.)

**The listener** is a thread per database, holding one connection that LISTENs on
the ``chronica`` channel and holds the follow locks: the only session state chronica
keeps, and so the one connection that must reach PostgreSQL itself, not a pooler in
transaction mode. It goes to ``CHRONICA["LISTEN_DATABASE"]`` (an alias of
``DATABASES``; default: the store's own). The followers of every event loop of the
process share it: it starts with the first subscription and closes its connection
when the last one ends. It gets a chronicum's lock once the writes that sent no
NOTIFY have committed, and then wakes that chronicum's followers. A lost connection
is opened again (after 0.1 s, doubling up to 5 s), and since notifications sent
meanwhile are lost, every follower is woken once the LISTEN and the locks are back.

Each wake of a chronicum bumps its ``generation``: followers woken by the same
notification may share one read (``chronica.follow``), a read begun before a later
notification may not be shared by those it woke.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import selectors
import socket
import threading
from typing import Any

__all__ = [
    "FOLLOWED",
    "NOTIFY_CHANNEL",
    "PG_FOLLOW",
    "PG_LISTEN",
    "PG_NOTIFY",
    "PG_UNFOLLOW",
    "listen",
    "listen_alias",
    "listener_threads",
    "notify_if_followed",
    "stop_listeners",
]

logger = logging.getLogger("chronica")

# -- the protocol -----------------------------------------------------------------

NOTIFY_CHANNEL = "chronica"
FOLLOWED = 0x63726F6E
"""The first key of the advisory lock a follower holds (the second: hashtext(id))."""

PG_LISTEN = f"LISTEN {NOTIFY_CHANNEL}"
PG_FOLLOW = f"SELECT pg_try_advisory_lock_shared({FOLLOWED}, hashtext(%s))"
PG_UNFOLLOW = f"SELECT pg_advisory_unlock_shared({FOLLOWED}, hashtext(%s))"
PG_NOTIFY = "SELECT pg_notify(%s, %s)"
"""Wake every follower of a chronicum (parameters: the channel and its ID), as a
delete does whether followed or not."""


def notify_if_followed(chronicum_id: str) -> str:
    """An expression (true) that sends the NOTIFY unless the write can take the
    chronicum's ``FOLLOWED`` lock (COALESCE evaluates its arguments in order, the
    NOTIFY only when needed). pg_notify() returns void: cast, it is an empty text.
    ``chronicum_id`` is the SQL of the chronicum's ID."""
    return (
        f"COALESCE(CASE WHEN pg_try_advisory_xact_lock({FOLLOWED}, hashtext({chronicum_id}))"
        f" THEN true END, pg_notify('{NOTIFY_CHANNEL}', {chronicum_id})::text IS NOT NULL)"
    )


# -- the listener ------------------------------------------------------------

_FIRST_RETRY = 0.1
_LAST_RETRY = 5.0
_RETRY_LOCK = 0.02  # seconds between two tries to take a chronicum's follow lock

_lock = threading.Lock()  # guards _listeners and every listener's subscriptions
_listeners: dict[tuple[Any, ...], _Listener] = {}


def listen_alias(alias: str) -> str:
    """The database alias the LISTEN connection for the store on ``alias`` uses:
    ``CHRONICA["LISTEN_DATABASE"]``, or ``alias`` itself."""
    from ..conf import chronica_settings

    return chronica_settings.LISTEN_DATABASE or alias


def connection_params(alias: str) -> dict[str, Any]:
    """The keyword arguments of ``psycopg.connect()`` for the Django database ``alias``,
    built by Django's backend as for its own connections, less its cursor class."""
    from django.db import connections

    params: dict[str, Any] = connections.create_connection(alias).get_connection_params()
    params.pop("cursor_factory", None)
    return params


def listen(alias: str, chronicum_id: str) -> _Subscription:
    """Wake-ups for one follower of ``chronicum_id`` on the PostgreSQL database
    ``alias`` (or ``CHRONICA["LISTEN_DATABASE"]``), in the running event loop, from
    this process's LISTEN connection."""
    params = connection_params(listen_alias(alias))
    key = tuple(sorted((k, v) for k, v in params.items() if isinstance(v, str | int | float)))
    loop = asyncio.get_running_loop()
    with _lock:
        listener = _listeners.get(key)
        if listener is None:
            listener = _listeners[key] = _Listener(key, params)
        subscription = _Subscription(listener, chronicum_id, loop)
        followers = listener.subscriptions.setdefault(chronicum_id, set())
        followers.add(subscription)
        first = len(followers) == 1
    if first:
        listener.poke()  # to take the chronicum's lock
    return subscription


def stop_listeners(timeout: float = 5.0) -> None:
    """Close every LISTEN connection of this process now and wait for their threads.
    Followers still running fall back to polling until they subscribe again."""
    with _lock:
        stopping = list(_listeners.values())
        _listeners.clear()
    for listener in stopping:
        listener.stop()
    for listener in stopping:
        listener.join(timeout)


def listener_threads() -> list[threading.Thread]:
    """The listener threads alive in this process (for tests and diagnostics)."""
    return [t for t in threading.enumerate() if t.name.startswith("chronica-listen")]


class _Subscription:
    def __init__(
        self, listener: _Listener, chronicum_id: str, loop: asyncio.AbstractEventLoop
    ) -> None:
        self._listener = listener
        self._chronicum_id = chronicum_id
        self._loop = loop
        self._event = asyncio.Event()
        self._closed = False

    @property
    def generation(self) -> int:
        """How many times the chronicum's followers were woken by this listener."""
        return self._listener.generations.get(self._chronicum_id, 0)

    def wake(self) -> None:
        """Called from the listener's thread."""
        with contextlib.suppress(RuntimeError):  # the follower's event loop has closed
            self._loop.call_soon_threadsafe(self._event.set)

    async def wait(self, timeout: float) -> None:
        if not self._event.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._event.wait()
        self._event.clear()

    def close(self) -> None:
        with _lock:
            if self._closed:
                return
            self._closed = True
            listener = self._listener
            mine = listener.subscriptions.get(self._chronicum_id, set())
            mine.discard(self)
            last = not mine
            if last:
                listener.subscriptions.pop(self._chronicum_id, None)
            stop = not listener.subscriptions and _listeners.get(listener.key) is listener
            if stop:
                del _listeners[listener.key]
        if stop:
            listener.stop()
        elif last:
            listener.poke()  # to release the chronicum's lock


class _Listener:
    """One thread and one connection LISTENing for this process, on one database."""

    def __init__(self, key: tuple[Any, ...], params: dict[str, Any]) -> None:
        self.key = key
        self.subscriptions: dict[str, set[_Subscription]] = {}
        self.generations: dict[str, int] = {}
        self._params = {"application_name": "chronica listener", **params, "autocommit": True}
        self._stopping = False
        self._delay = _FIRST_RETRY
        # The chronica whose lock this connection holds.
        self._followed: set[str] = set()
        # Written to by poke() and stop(), so that the thread's select() returns at once.
        self._poke_r, self._poke_w = socket.socketpair()
        self._thread = threading.Thread(target=self._run, name="chronica-listen", daemon=True)
        self._thread.start()

    def poke(self) -> None:
        """Have the thread look at the subscriptions again."""
        with contextlib.suppress(OSError):
            self._poke_w.send(b"\0")

    def stop(self) -> None:
        self._stopping = True
        self.poke()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def _run(self) -> None:
        try:
            while not self._stopping:
                try:
                    self._listen()
                except Exception as exc:
                    if self._stopping:
                        break
                    logger.warning(
                        "chronica: the LISTEN connection failed (%s); followers poll"
                        " until it is back, next attempt in %.1f s",
                        exc,
                        self._delay,
                    )
                self._wake_all()
                # A selector, not select(): a process with a thousand streams open
                # has descriptors past select()'s limit (1024).
                with selectors.DefaultSelector() as selector:
                    selector.register(self._poke_r, selectors.EVENT_READ)
                    if selector.select(self._delay):
                        self._poke_r.recv(4096)
                self._delay = min(self._delay * 2, _LAST_RETRY)
        finally:
            self._poke_r.close()
            self._poke_w.close()

    def _listen(self) -> None:
        import psycopg

        with psycopg.Connection.connect(**self._params) as conn:
            # Notifications that arrive while a statement of ours runs.
            conn.add_notify_handler(lambda notify: self._wake(notify.payload))
            conn.execute(PG_LISTEN)
            self._followed = set()
            self._follow(conn)
            self._delay = _FIRST_RETRY
            # Whatever committed before the LISTEN took effect sent its NOTIFY to nobody.
            self._wake_all()
            pgconn = conn.pgconn
            with selectors.DefaultSelector() as selector:
                selector.register(pgconn.socket, selectors.EVENT_READ, "server")
                selector.register(self._poke_r, selectors.EVENT_READ, "poke")
                while not self._stopping:
                    # While a lock is not had yet (writes that sent no NOTIFY are
                    # still open), try again soon.
                    with _lock:
                        waiting = not set(self.subscriptions) <= self._followed
                    timeout = _RETRY_LOCK if waiting else None
                    ready = {key.data for key, _ in selector.select(timeout)}
                    if "poke" in ready:
                        self._poke_r.recv(4096)
                        if self._stopping:
                            return
                    if "server" in ready:
                        pgconn.consume_input()  # raises once the connection is lost
                        while (notify := pgconn.notifies()) is not None:
                            self._wake(notify.extra.decode())
                    self._follow(conn)

    def _follow(self, conn: Any) -> None:
        """Hold the lock of each followed chronicum and of no other; wake the
        followers of a chronicum once its lock is had."""
        with _lock:
            wanted = set(self.subscriptions)
        for chronicum_id in wanted - self._followed:
            # Tried, never waited for: a write left open in someone's transaction
            # must hold up no other chronicum.
            row = conn.execute(PG_FOLLOW, [chronicum_id]).fetchone()
            if row and row[0]:
                self._followed.add(chronicum_id)
                self._wake(chronicum_id)
        for chronicum_id in self._followed - wanted:
            conn.execute(PG_UNFOLLOW, [chronicum_id])
            self._followed.discard(chronicum_id)

    def _wake(self, chronicum_id: str) -> None:
        with _lock:
            woken = list(self.subscriptions.get(chronicum_id, ()))
            if woken:
                self.generations[chronicum_id] = self.generations.get(chronicum_id, 0) + 1
            else:
                self.generations.pop(chronicum_id, None)
        _wake(woken)

    def _wake_all(self) -> None:
        with _lock:
            for chronicum_id in self.subscriptions:
                self.generations[chronicum_id] = self.generations.get(chronicum_id, 0) + 1
            woken = [s for group in self.subscriptions.values() for s in group]
        _wake(woken)


def _wake(woken: list[_Subscription]) -> None:
    """Wake these followers: one call into each event loop, however many they are."""
    by_loop: dict[asyncio.AbstractEventLoop, list[asyncio.Event]] = {}
    for subscription in woken:
        by_loop.setdefault(subscription._loop, []).append(subscription._event)
    for loop, events in by_loop.items():
        with contextlib.suppress(RuntimeError):  # the followers' event loop has closed
            loop.call_soon_threadsafe(_set_all, events)


def _set_all(events: list[asyncio.Event]) -> None:
    for event in events:
        event.set()


def _forget_listeners() -> None:
    # A forked child has none of its parent's threads: it opens its own listener.
    global _lock
    _lock = threading.Lock()
    _listeners.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_listeners)
atexit.register(stop_listeners, 1.0)
