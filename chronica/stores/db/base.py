"""The plain dialect: chronica's SQL (``sql``) for any database Django supports, and the
base of every vendor's dialect.

A dialect is to chronica's tables what ``DatabaseOperations`` and ``DatabaseFeatures``
are to a Django backend: the statements, formatted once from the templates of ``sql``,
each way a vendor differs as a method its subclass overrides or a flag of its
``features`` (``sqlite.py``, ``postgresql.py``, ``features.py``). Nothing asks
``connection.vendor`` but the choice of the dialect (``dialects.dialect_of``)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from django.db import IntegrityError, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from ... import models
from ...errors import ChronicumExists, InvalidCredential, InvalidQuery, StoreUnsupported
from ...interfaces import Create, FollowPage, Subscription, WindowPage
from ...search import SearchQuery
from ...validation.jsondata import dumps_data
from ...values import ActaQuery, Actum, Chronicum, Recorded, SearchHit
from . import compaction_sql, sql, state_sql
from .features import Features
from .rows import acta_of, stamped
from .sql import filters, row_limit

__all__ = ["BaseDialect", "SearchRead", "Statement"]

_T = TypeVar("_T")

Statement = tuple[str, dict[str, Any]]
SearchRead = tuple[Statement, Callable[[list[tuple[Any, ...]]], list[SearchHit]]]

CREATE_ATTEMPTS = 6
"""How often a create on a database without ON CONFLICT tries again when the chronicum
that took its ID was deleted meanwhile."""


class BaseDialect:
    """Chronica's SQL in the plain dialect, and the features a vendor may change."""

    tables = {
        "acta": models.Actum._meta.db_table,
        "chronica": models.Chronicum._meta.db_table,
        "states": models.SharedState._meta.db_table,
        "credentials": models.AgentCredential._meta.db_table,
        "erasures": models.ErasureRecord._meta.db_table,
    }

    features = Features()
    now = "%(now)s"
    """The moment of the statement, where a statement compares with it."""
    share = ""
    """How a write takes the row of the credential it is made with (PostgreSQL: FOR
    SHARE, so that a revocation waits for it)."""
    credential_param = "%(credential)s"

    chronicum_is = "chronicum_id = %(chronicum_id)s"
    """How a statement on the acta names its chronicum: an equality, so that a table
    partitioned or sharded by ``chronicum_id`` is read in one partition."""

    def __init__(self) -> None:
        self.sql: dict[tuple[str, bool], str] = {}
        for module in (sql, compaction_sql, state_sql):
            for name in dir(module):
                template = getattr(module, name)
                if name.isupper() and isinstance(template, str) and "{" in template:
                    for owned in (True, False):
                        self.sql[name, owned] = self.render(template, owned=owned)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def render(self, template: str, *, owned: bool = True, **more: str) -> str:
        """``template`` with this dialect's pieces; ``owned``: with the owner's check;
        ``more``: pieces of the caller's own, or in place of the dialect's."""
        owner = (sql.OWNED if owned else sql.EXISTING).format(**self.tables)
        credential = dict(self.tables, now=self.now, share=self.share)
        credential_ok = sql.CREDENTIAL_OK.format(**credential).replace(
            "(%(credential)s IS NULL", f"({self.credential_param} IS NULL", 1
        )
        pieces = dict(
            self.tables,
            chronicum_is=self.chronicum_is,
            a_chronicum_is="a." + self.chronicum_is,
            owned=owner,
            c_owned=" AND c.owner_id = %(owner_id)s" if owned else "",
            columns=self.columns(),
            a_columns=self.columns("a."),
            fits=sql.FITS,
            fitting_columns=sql.fitting(sql.FITS),
            fits_cut=sql.FITS_CUT,
            fitting_columns_cut=sql.fitting(sql.FITS_CUT),
            size=self.size(),
            a_size=self.size("a."),
            count=f"COALESCE(a.tokens, {self.estimate('a.')})",
            newest=sql.NEWEST.format(**self.tables, chronicum_is=self.chronicum_is),
            insert_columns=sql.INSERT_COLUMNS,
            credential_ok=credential_ok,
            credential_state=sql.CREDENTIAL_STATE.format(**credential),
            now=self.now,
            share=self.share,
        )
        pieces.update(more)
        return template.format(**pieces)

    def statement(self, name: str, owned: bool = True) -> str:
        return self.sql[name, owned]

    def filters(self, query: ActaQuery) -> tuple[str, dict[str, Any]]:
        """:func:`filters`, and the compacted view's condition where the query asks."""
        where, params = filters(query)
        return where + (self.statement("COMPACTED") if query.compacted else ""), params

    # -- fragments ---------------------------------------------------------------

    def columns(self, table: str = "") -> str:
        """What every read selects of an actum, in the order ``rows.acta_of`` takes it."""
        return ", ".join(table + column for column in sql.ACTUM_COLUMNS)

    def octets(self, column: str) -> str:
        """The size of a text column in bytes of UTF-8."""
        return f"length(CAST({column} AS BLOB))"

    def data_octets(self, column: str) -> str:
        """The size of the JSON ``data`` column in bytes (0 for NULL)."""
        return f"COALESCE({self.octets(column)}, 0)"

    def size(self, table: str = "") -> str:
        """What an actum weighs against ``ActaQuery.max_bytes``."""
        return f"({self.octets(table + 'content')} + {self.data_octets(table + 'data')})"

    def estimate(self, table: str = "") -> str:
        """The database's estimate of an actum that was stored without a token count: the
        default counter's formula, ``4 + ceil(UTF-8 bytes of content / 3.5)``."""
        return f"(4 + (2 * {self.octets(table + 'content')} + 6) / 7)"

    def time(self, connection: BaseDatabaseWrapper, moment: dt.datetime) -> Any:
        """A moment as this database's timestamp columns take it."""
        return connection.ops.adapt_datetimefield_value(moment)

    def cursor(self, connection: BaseDatabaseWrapper) -> Any:
        return connection.cursor()  # (chronica's statements run on it: rows.utc takes times)

    # -- reads -------------------------------------------------------------------

    def window(
        self, owner_id: str | None, chronicum_id: str, query: ActaQuery
    ) -> tuple[Statement, Callable[[list[tuple[Any, ...]]], WindowPage | None]]:
        """The statement of a context window page, and what turns its rows into the
        page (``None`` for a missing chronicum or another owner's).

        Every row is (found, where ``before`` stands, whether an older page exists,
        the actum's columns, its seq); a row with no actum when the window is empty,
        none (or one not found) for a missing chronicum or another owner's."""
        where, params = self.filters(query)
        params.update(chronicum_id=chronicum_id, owner_id=owner_id, before=query.before)
        before = sql.before_fields(self.tables, query.before)
        owned = owner_id is not None
        last_n = row_limit(query.last_n)
        if query.max_tokens is not None:
            fits = ["w.w_used <= %(max_tokens)s"]
            params["max_tokens"] = query.max_tokens
            if query.max_bytes is not None:
                fits.append("(w.w_bytes <= %(max_bytes)s OR w.w_n = 1)")
                params["max_bytes"] = query.max_bytes
            if last_n is not None:
                fits.append("w.w_n <= %(last_n)s")
                params["last_n"] = last_n
            text = self.statement("WINDOW_WITHIN_TOKENS", owned).format(
                filters=where, fits=" AND ".join(fits), **before
            )
        elif query.max_bytes is not None:
            params["max_bytes"] = query.max_bytes
            if last_n is not None:
                params["last_n"] = last_n
            short = last_n is not None and last_n <= sql.BYTES_WINDOW_ROWS
            text = self.statement(
                "WINDOW_WITHIN_BYTES" if short else "WINDOW_WITHIN_BYTES_CUT", owned
            ).format(
                filters=where,
                limit="" if last_n is None else " LIMIT CAST(%(last_n)s AS BIGINT) + 1",
                **before,
            )
        else:
            if last_n is not None:
                params["last_n"] = last_n
            # (no "older page" column: the extra row of LIMIT last_n + 1 says so)
            text = self.statement("WINDOW", owned).format(
                filters=where,
                limit="" if last_n is None else " LIMIT CAST(%(last_n)s AS BIGINT) + 1",
                **before,
            )
        tokens = query.max_tokens is not None
        within_bytes = not tokens and query.max_bytes is not None

        def page(rows: list[tuple[Any, ...]]) -> WindowPage | None:
            if not rows or not rows[0][0]:
                return None
            before_at = rows[0][1]
            if query.before is not None and before_at is None:
                raise InvalidQuery(f"before={query.before!r} is not an actum of this chronicum")
            kept = [row[3:-1] for row in rows if row[-1] is not None]
            if tokens:
                more = bool(kept) and bool(rows[0][2])
            elif within_bytes and kept and not rows[-1][2]:
                # The first actum that did not fit, and those after it: an older page.
                del kept[next(i for i, row in enumerate(rows) if not row[2]) :]
                more = True
            else:
                # (the extra row of LIMIT last_n + 1 says so)
                more = last_n is not None and len(kept) > last_n
                if more:
                    kept = kept[:last_n]
            kept.reverse()
            return acta_of(chronicum_id, kept, raw=query.raw_data), more

        return (text, params), page

    def after(
        self,
        owner_id: str,
        chronicum_id: str,
        query: ActaQuery,
        position: int | str | None,
        limit: int,
    ) -> tuple[Statement, Callable[[list[tuple[Any, ...]]], FollowPage | None]]:
        """The statement of ``acta_after`` and what turns its rows into the page. Every
        row is (found, the newest seq, the seq read from, [cut,] the actum's columns,
        its seq)."""
        where, params = self.filters(query)
        params.update(chronicum_id=chronicum_id, owner_id=owner_id, limit=limit)
        if position is None:
            start, params["limit"] = "0", 0
        elif isinstance(position, str):
            start, params["after"] = sql.AFTER_ACTUM.format(**self.tables), position
        else:
            start, params["position"] = "%(position)s", position
        within = query.max_bytes is not None
        if within:
            params["max_bytes"] = query.max_bytes
        name = "AFTER_WITHIN_BYTES" if within else "AFTER"
        text = self.statement(name).format(filters=where, start=start)
        first = 4 if within else 3

        def page(rows: list[tuple[Any, ...]]) -> FollowPage | None:
            found, top, start_at = rows[0][:3]
            if not found:
                return None
            top = int(top or 0)
            if position is None:
                return [], top, False
            if start_at is None:
                raise InvalidQuery(f"after={position!r} is not an actum of this chronicum")
            kept = [row[first:-1] for row in rows if row[-1] is not None]
            acta = acta_of(chronicum_id, kept, raw=query.raw_data)
            if within and rows[0][3]:
                return acta, int(rows[-1][-1]), True  # cut at the byte budget: read on
            if len(acta) >= limit:
                return acta, int(rows[-1][-1]), True
            # Every actum up to the newest was read, the filtered-out ones included.
            return acta, max(int(start_at), top), False

        return (text, params), page

    def listing(
        self, connection: BaseDatabaseWrapper, owner_id: str, limit: int, after: Chronicum | None
    ) -> Statement:
        params: dict[str, Any] = {"owner_id": owner_id, "limit": limit}
        if after is not None:
            params.update(at=self.time(connection, after.last_activity_at), after_id=after.id)
        text = self.statement("LIST").format(after="" if after is None else sql.LIST_AFTER)
        return text, params

    # -- writes ------------------------------------------------------------------

    has_on_conflict = False
    """``INSERT ... ON CONFLICT DO NOTHING`` (PostgreSQL; SQLite 3.24 and later)."""

    def create_chronicum(self, connection: BaseDatabaseWrapper, chronicum: Chronicum) -> None:
        """Store ``chronicum``; ``ChronicumExists`` if its ID is taken: where the database
        can, one statement that creates or finds the ID taken (no IntegrityError, which
        a delete of the chronicum that took the ID right after it would leave
        unexplained)."""
        if not self.has_on_conflict:
            for _attempt in range(CREATE_ATTEMPTS):
                try:
                    return self.retry_when_locked(
                        connection,
                        lambda: self.create_in_transaction(connection, chronicum),
                    )
                except ChronicumExists:
                    if (
                        models.Chronicum.objects.using(connection.alias)
                        .filter(pk=chronicum.id)
                        .exists()
                    ):
                        raise
                    # The chronicum that took the ID was deleted since: try again.
            raise ChronicumExists(chronicum.id)
        params = {
            "chronicum_id": chronicum.id,
            "owner_id": chronicum.owner_id,
            "started_at": self.time(connection, chronicum.started_at),
            "last_activity_at": self.time(connection, chronicum.last_activity_at),
        }

        def insert() -> int:
            with self.cursor(connection) as cursor:
                cursor.execute(self.statement("CREATE"), params)
                return int(cursor.rowcount)

        if self.retry_when_locked(connection, insert) == 0:
            raise ChronicumExists(chronicum.id)

    def create_in_transaction(self, connection: BaseDatabaseWrapper, chronicum: Chronicum) -> None:
        """``create_chronicum`` inside the caller's transaction (no retry of its own)."""
        rows = models.Chronicum.objects.using(connection.alias)
        try:
            with transaction.atomic(using=connection.alias):
                rows.create(
                    id=chronicum.id,
                    owner_id=chronicum.owner_id,
                    started_at=chronicum.started_at,
                    last_activity_at=chronicum.last_activity_at,
                )
        except IntegrityError:
            raise ChronicumExists(chronicum.id) from None

    def append(
        self,
        connection: BaseDatabaseWrapper,
        owner_id: str | None,
        chronicum_id: str,
        acta: Sequence[Actum],
        key: str | None,
        tokens: Sequence[int | None],
        create: Create | None,
        credential: str | None = None,
    ) -> Recorded | None:
        """``DjangoStore.append`` without state: the write, owner-checked where it appends.

        Here, for any database: a transaction that takes the chronicum's lock first (a
        write, checking the owner), creates the chronicum where asked, reads a keyed
        batch back, inserts the acta and bumps the chronicum. The vendors' dialects do
        the same in fewer statements."""

        def write() -> Recorded | None:
            with transaction.atomic(using=connection.alias), self.cursor(connection) as cursor:
                if not self.lock_chronicum(cursor, owner_id, chronicum_id, credential):
                    self.check_credential(connection, cursor, credential)
                    if create != "missing" or owner_id is None:
                        return None
                    now = dt.datetime.now(dt.UTC)
                    try:
                        self.create_in_transaction(
                            connection, Chronicum(chronicum_id, owner_id, now, now)
                        )
                    except ChronicumExists:
                        return None  # another owner's (or the same owner's: ask again)
                if key is not None and (replay := self.replay(cursor, owner_id, chronicum_id, key)):
                    return Recorded(replay, replayed=True)
                now = dt.datetime.now(dt.UTC)
                at = self.time(connection, now)
                keys = (
                    [None] * len(acta)
                    if key is None
                    else [key] + [f"{key}\n{i}" for i in range(1, len(acta))]
                )
                cursor.executemany(
                    self.statement("INSERT"),
                    [
                        {
                            "id": a.id,
                            "chronicum_id": chronicum_id,
                            "kind": a.kind.value,
                            "actor_kind": a.actor_kind.value,
                            "actor": a.actor,
                            "content": a.content,
                            "at": at,
                            "call_id": a.call_id,
                            "data": None if a.data is None else dumps_data(a.data),
                            "tokens": count,
                            "key": member_key,
                            "recorded_by": a.recorded_by,
                        }
                        for a, count, member_key in zip(acta, tokens, keys, strict=True)
                    ],
                )
                cursor.execute(self.statement("BUMP"), {"at": at, "chronicum_id": chronicum_id})
            return Recorded(stamped(acta, now))

        for _attempt in range(CREATE_ATTEMPTS):
            recorded = self.retry_when_locked(connection, write)
            if recorded is not None or create != "missing":
                return recorded
        return None

    def replay(self, cursor: Any, owner_id: str | None, chronicum_id: str, key: str) -> list[Actum]:
        """The acta a keyed write stored, still there, in write order, read with the owner
        checked in the same statement; ``[]`` if none (or not the owner's any more)."""
        prefix = key + "\n"
        cursor.execute(
            self.statement("BY_KEY", owner_id is not None),
            {
                "chronicum_id": chronicum_id,
                "owner_id": owner_id,
                "key": key,
                "prefix": prefix,
                "prefix_length": len(prefix),
            },
        )
        return acta_of(chronicum_id, cursor.fetchall())

    def lock_chronicum(
        self, cursor: Any, owner_id: str | None, chronicum_id: str, credential: str | None = None
    ) -> bool:
        """Take the chronicum's row lock (SQLite: the database's write lock, a write
        first); whether it is there and ``owner_id``'s (any owner's for ``None``), and
        the ``credential`` (a key ID) still valid where one is given."""
        cursor.execute(
            self.statement("LOCK"),
            {
                "chronicum_id": chronicum_id,
                "owner_id": owner_id,
                "credential": credential,
                "erasing": owner_id,
                "now": self.time(cursor.db, dt.datetime.now(dt.UTC)),
            },
        )
        return bool(cursor.rowcount)

    def check_credential(
        self, connection: BaseDatabaseWrapper, cursor: Any, credential: str | None
    ) -> None:
        """After a write found nothing to write into: ``InvalidCredential`` where that
        was the credential it was made with (revoked or expired meanwhile)."""
        if credential is None:
            return
        now = self.time(connection, dt.datetime.now(dt.UTC))
        cursor.execute(self.statement("CREDENTIAL_STATE"), {"credential": credential, "now": now})
        row = cursor.fetchone()
        if row is None:
            raise InvalidCredential("unknown")
        if row[0]:
            raise InvalidCredential("revoked")
        if row[1]:
            raise InvalidCredential("expired")

    def deleted(self, cursor: Any, chronicum_id: str) -> None:
        """Tell followers, in the deleting transaction, that the chronicum is gone."""

    def redact(self, connection: BaseDatabaseWrapper, params: dict[str, Any]) -> list[Any]:
        """Empty one actum of the owner's (``sql.REDACT``) and wake the chronicum's
        followers, in one transaction; the actum's row as it is now, or none."""
        with transaction.atomic(using=connection.alias), self.cursor(connection) as cursor:
            cursor.execute(self.statement("REDACT"), params)
            rows: list[Any] = cursor.fetchall()
            if rows:
                self.deleted(cursor, params["chronicum_id"])
        return rows

    def subscribe(self, alias: str, chronicum_id: str) -> Subscription | None:
        """Wake-ups for a follower of ``chronicum_id``; ``None``: followers poll."""
        return None

    searches = False
    """Whether ``search`` works here (an index the database keeps: ``search.py``)."""

    def search(
        self,
        config: str,
        owner_id: str,
        query: SearchQuery,
        wanted: ActaQuery,
        chronica: frozenset[str] | None,
        limit: int,
        offset: int,
        namespace: str | None = None,
    ) -> SearchRead:
        """The statement of ``DjangoStore.search`` and what turns its rows into hits."""
        raise StoreUnsupported(f"{type(self).__name__} has no full-text search")

    def matching(self, config: str, query: SearchQuery) -> tuple[str, list[Any]]:
        """A subquery of the ``seq`` of every actum, of any owner, that matches."""
        raise StoreUnsupported(f"{type(self).__name__} has no full-text search")

    def forget_in_index(self, connection: BaseDatabaseWrapper) -> None:
        """After acta were emptied or removed: nothing of them left in the search index
        (an index the database rewrites in place, as PostgreSQL's, needs nothing)."""

    def retry_when_locked(self, connection: BaseDatabaseWrapper, write: Callable[[], _T]) -> _T:
        """Run ``write``, a whole transaction of ours (only SQLite runs it again)."""
        return write()
