"""Following a chronicum: the loop behind ``services.afollow``, and on PostgreSQL the
one LISTEN connection per process that wakes every follower.

A follower reads forward from a position (``FollowingStore``), yields what it
read, and waits for news: on PostgreSQL a NOTIFY for its chronicum, which the
writing transaction sends as it commits; elsewhere nothing, so it reads again
after ``CHRONICA["FOLLOW_POLL_INTERVAL"]`` seconds. On PostgreSQL that interval
only matters for writers that send no NOTIFY (the Go library writing into the
same tables), and while the LISTEN connection is down.

The listener is a thread per database, holding one connection that LISTENs on
the ``chronica`` channel. The followers of every event loop of the process share
it: it starts with the first subscription and closes its connection when the
last one ends. On that connection it also holds a lock per followed chronicum,
without which writes into it send no NOTIFY (``chronica.stores.pg_listen`` says why); it
gets the lock once the writes that sent none have committed, and then wakes that
chronicum's followers. A lost connection is opened again (after
0.1 s, doubling up to 5 s), and since notifications sent meanwhile are lost,
every follower is woken once the LISTEN and the locks are back.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import select
import socket
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from .errors import ChronicumNotFound
from .interfaces import Subscription
from .values import Actum

__all__ = ["PAGE", "Polling", "follow", "listen", "stop_listeners"]

logger = logging.getLogger("chronica")

PAGE = 200
"""The most acta a follower reads in one statement."""

Read = Callable[[int, int], Awaitable[tuple[list[Actum], int] | None]]
"""``read(position, limit)``: ``FollowingStore.acta_after`` for one follower."""


async def follow(
    chronicum_id: str, read: Read, position: int, news: Subscription, interval: float
) -> AsyncGenerator[Actum, None]:
    """Every actum ``read`` finds after ``position``, oldest first, until the caller
    stops; ``ChronicumNotFound`` once the chronicum is gone. ``news`` is closed at the end.

    ``news`` must have been subscribed before ``position`` was taken: whatever
    commits after that wakes the follower, or is read by its next read anyway.
    """
    try:
        while True:
            page = await read(position, PAGE)
            if page is None:
                raise ChronicumNotFound(chronicum_id)
            acta, position = page
            for actum in acta:
                yield actum
            if len(acta) < PAGE:
                await news.wait(interval)
    finally:
        news.close()


class Polling:
    """No notifications: the follower reads again after each interval."""

    async def wait(self, timeout: float) -> None:
        await asyncio.sleep(timeout)

    def close(self) -> None:
        pass


# -- the listener ------------------------------------------------------------

_FIRST_RETRY = 0.1
_LAST_RETRY = 5.0
_RETRY_LOCK = 0.02  # seconds between two tries to take a chronicum's follow lock

_lock = threading.Lock()  # guards _listeners and every listener's subscriptions
_listeners: dict[tuple[Any, ...], _Listener] = {}


def listen(alias: str, chronicum_id: str) -> Subscription:
    """Wake-ups for one follower of ``chronicum_id`` on the PostgreSQL database
    ``alias``, in the running event loop, from this process's LISTEN connection."""
    from .stores.pg_async import connection_params

    params = connection_params(alias)
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
                if select.select([self._poke_r], [], [], self._delay)[0]:
                    self._poke_r.recv(4096)
                self._delay = min(self._delay * 2, _LAST_RETRY)
        finally:
            self._poke_r.close()
            self._poke_w.close()

    def _listen(self) -> None:
        import psycopg

        from .stores.pg_listen import PG_LISTEN

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
            poke = self._poke_r.fileno()
            while not self._stopping:
                # While a lock is not had yet (writes that sent no NOTIFY are still
                # open), try again soon.
                with _lock:
                    waiting = not set(self.subscriptions) <= self._followed
                timeout = _RETRY_LOCK if waiting else None
                ready = select.select([pgconn.socket, poke], [], [], timeout)[0]
                if poke in ready:
                    self._poke_r.recv(4096)
                    if self._stopping:
                        return
                if pgconn.socket in ready:
                    pgconn.consume_input()  # raises once the connection is lost
                    while (notify := pgconn.notifies()) is not None:
                        self._wake(notify.extra.decode())
                self._follow(conn)

    def _follow(self, conn: Any) -> None:
        """Hold the lock of each followed chronicum and of no other; wake the
        followers of a chronicum once its lock is had."""
        from .stores.pg_listen import PG_FOLLOW, PG_UNFOLLOW

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
        for subscription in woken:
            subscription.wake()

    def _wake_all(self) -> None:
        with _lock:
            woken = [s for group in self.subscriptions.values() for s in group]
        for subscription in woken:
            subscription.wake()


def _forget_listeners() -> None:
    # A forked child has none of its parent's threads: it opens its own listener.
    global _lock
    _lock = threading.Lock()
    _listeners.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_listeners)
atexit.register(stop_listeners, 1.0)
