"""The asyncio path of ``DjangoStore`` on PostgreSQL: no worker thread.

psycopg's async connections, from a ``psycopg_pool`` pool per event loop and
database alias, built from that alias's Django settings the way Django's own
backend builds its connections (NAME, USER, PASSWORD, HOST, PORT, OPTIONS and
Django's adapters; client- or server-side binding and prepared statements as
OPTIONS say). They run the same plans, so the same statements, as the sync path
(``chronica.stores.db.plans``), and a database error comes back as Django's
(``django.db.OperationalError`` and the rest), as it does there.

A pool holds up to ``CHRONICA["ASYNC_POOL_SIZE"]`` connections and is made on
first use in an event loop. It is closed when that loop ends: ``asyncio.run()``,
``asyncio.Runner``, uvicorn, pytest-asyncio and asgiref's ``async_to_sync`` cancel
the tasks left at their end, and a task of chronica's closes the loop's pools
when it is cancelled. (Not at ``loop.shutdown_asyncgens()``: the OpenAI Agents
SDK's ``run_sync`` calls it after each run and keeps the loop.) A loop run by hand
(``new_event_loop()``, ``run_until_complete()``, ``close()``) closes them in its
``close()``, which chronica wraps for that; a loop whose ``close`` cannot be
wrapped (uvloop's) closes them with ``await close_pools()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import weakref
from typing import TYPE_CHECKING, Any, TypeVar

from django.db import connections, utils

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg_pool import AsyncConnectionPool

    from .db.base import Plan

__all__ = ["available", "close_pools", "connection_params", "run"]

_T = TypeVar("_T")

# Seconds a call waits for a connection of the pool before it fails
# (psycopg_pool's PoolTimeout, an OperationalError).
CHECKOUT_TIMEOUT = 10.0

# Django's classes, from the most to the least specific, as Django wraps psycopg's.
_DJANGO_ERRORS: tuple[type[Exception], ...] = (
    utils.DataError,
    utils.OperationalError,
    utils.IntegrityError,
    utils.InternalError,
    utils.ProgrammingError,
    utils.NotSupportedError,
    utils.DatabaseError,
    utils.InterfaceError,
    utils.Error,
)


class _Pools:
    """This event loop's pools by alias, and the task that closes them at its end."""

    def __init__(self) -> None:
        self.opening: dict[str, asyncio.Task[AsyncConnectionPool[Any]]] = {}
        self.closer: asyncio.Task[None] | None = None

    async def close(self) -> None:
        for opening in list(self.opening.values()):
            if opening.done() and not opening.cancelled() and opening.exception() is None:
                await _close(opening.result())
        self.opening.clear()


_wrapped: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()
_by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Pools] = weakref.WeakKeyDictionary()


def available() -> bool:
    """Whether psycopg_pool is installed (it comes with the ``postgres`` extra)."""
    return importlib.util.find_spec("psycopg_pool") is not None


def connection_params(alias: str) -> dict[str, Any]:
    """The keyword arguments of ``psycopg.connect()`` for the Django database ``alias``,
    built by Django's backend as for its own connections, less its cursor class."""
    params: dict[str, Any] = connections.create_connection(alias).get_connection_params()
    params.pop("cursor_factory", None)
    return params


async def run(alias: str, plan: Plan[_T]) -> _T:
    """Run ``plan`` on a connection of this event loop's pool for ``alias``."""
    import psycopg

    pool = await _pool(alias)
    try:
        async with pool.connection() as conn, conn.cursor() as cursor:
            rows: list[tuple[Any, ...]] | None = None
            try:
                while True:
                    sql, params = plan.send(rows)  # type: ignore[arg-type]
                    await cursor.execute(sql, params)
                    rows = await cursor.fetchall()
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
    except psycopg.Error as exc:
        if isinstance(exc, psycopg.OperationalError):
            # After a server restart every idle connection is dead: replace them
            # now, so that only this call fails, as on the sync path.
            await pool.check()
        raise _as_django(exc) from exc


async def close_pools() -> None:
    """Close the pools of the running event loop (the next call opens new ones)."""
    await _close_pools(asyncio.get_running_loop())


async def _close_pools(loop: asyncio.AbstractEventLoop) -> None:
    pools = _by_loop.pop(loop, None)
    if pools is not None and pools.closer is not None:
        pools.closer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pools.closer


def _close_pools_first(loop: asyncio.AbstractEventLoop) -> None:
    """Have ``loop.close()`` close the loop's pools first. A loop run by hand is often
    closed without its tasks being cancelled, and the connections would stay open
    until the garbage collector found them."""
    if loop in _wrapped:
        return
    close = loop.close

    def close_pools_then_the_loop() -> None:
        if loop in _by_loop and not loop.is_running() and not loop.is_closed():
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                loop.run_until_complete(_close_pools(loop))
        close()

    # uvloop's loop takes no attribute: asyncio.run() and close_pools() still close.
    with contextlib.suppress(AttributeError):
        loop.close = close_pools_then_the_loop  # type: ignore[method-assign]
        _wrapped.add(loop)


async def _pool(alias: str) -> AsyncConnectionPool[Any]:
    loop = asyncio.get_running_loop()
    pools = _by_loop.get(loop)
    if pools is None:
        pools = _by_loop[loop] = _Pools()
        pools.closer = loop.create_task(_close_at_the_end(loop, pools))
        _close_pools_first(loop)
    opening = pools.opening.get(alias)
    if opening is None:
        opening = pools.opening[alias] = loop.create_task(_open(alias))
    try:
        # Shielded: a caller cancelled while the pool opens must not cancel the
        # opening that other callers wait for.
        return await asyncio.shield(opening)
    except Exception:
        if pools.opening.get(alias) is opening:
            del pools.opening[alias]
        raise


async def _open(alias: str) -> AsyncConnectionPool[Any]:
    from psycopg import AsyncClientCursor, AsyncCursor, IsolationLevel
    from psycopg_pool import AsyncConnectionPool

    from ..conf import chronica_settings

    options = connections.settings[alias].get("OPTIONS", {})
    role = options.get("assume_role")
    isolation = options.get("isolation_level")

    async def configure(conn: AsyncConnection[Any]) -> None:
        if isolation is not None:
            await conn.set_isolation_level(IsolationLevel(isolation))
        if role:
            await conn.execute("SELECT set_config('role', %s, false)", [role])

    kwargs = {"application_name": "chronica async", **connection_params(alias)}
    kwargs["autocommit"] = True
    kwargs["cursor_factory"] = (
        AsyncCursor if options.get("server_side_binding") is True else AsyncClientCursor
    )
    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        kwargs=kwargs,
        min_size=1,
        max_size=chronica_settings.ASYNC_POOL_SIZE,
        open=False,
        configure=configure,
        name=f"chronica-{alias}",
        timeout=CHECKOUT_TIMEOUT,
    )
    await pool.open()
    return pool


async def _close_at_the_end(loop: asyncio.AbstractEventLoop, pools: _Pools) -> None:
    try:
        await loop.create_future()
    finally:
        if _by_loop.get(loop) is pools:
            del _by_loop[loop]
        await pools.close()


async def _close(pool: AsyncConnectionPool[Any]) -> None:
    # psycopg_pool's close() first waits for its worker tasks, and fails when the
    # end of the loop has cancelled them already (asyncio.run() cancels every task
    # before it closes the async generators): so the idle connections are taken
    # out and closed here first. One in use is closed as it is given back.
    from psycopg_pool import PoolTimeout

    with contextlib.suppress(PoolTimeout):
        while pool.get_stats().get("pool_available", 0):
            conn = await pool.getconn(timeout=1.0)
            await conn.close()
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await pool.close(timeout=1.0)


def _as_django(exc: Exception) -> Exception:
    import psycopg

    for django_error in _DJANGO_ERRORS:
        if isinstance(exc, getattr(psycopg, django_error.__name__)):
            return django_error(*exc.args)
    return exc
