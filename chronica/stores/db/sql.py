"""chronica's SQL, as plain templates with named parameters.

Each template is formatted once per dialect (``base.BaseDialect``): ``{acta}``,
``{chronica}`` and ``{states}`` are the tables of chronica's models, the other fields
are pieces a dialect spells its own way (``{chronicum_is}``, ``{size}``, ...). What a
call adds (its filters, a limit) is a field left for it, filled in by
``base.BaseDialect.window`` and its kin. Values always travel as parameters, named
``%(name)s``.

Every statement that reads or writes acta names the chronicum by equality, so that a
table partitioned or sharded by ``chronicum_id`` is read in one partition.
"""

from __future__ import annotations

from typing import Any

from ...values import FILTERS, ActaQuery

ACTUM_COLUMNS = (
    "id",
    "kind",
    "actor_kind",
    "actor",
    "content",
    "at",
    "call_id",
    "data",
    "recorded_by",
    "compacts",
    "redacted_at",
    "redacted_reason",
)
"""What every read selects of an actum, in the order ``rows.acta_of`` takes them."""

INSERT_COLUMNS = (
    "id, chronicum_id, kind, actor_kind, actor, content, at, call_id, data, tokens,"
    " idempotency_key, recorded_by"
)

# A write made with an agent credential lands only while the credential is valid,
# checked in the statement that appends (NULL: no credential). PostgreSQL also takes
# the credential's row in share mode: a revocation waits for the writes under way.
# The same check refuses a write for an owner whose erasure is under way
# (``chronica_erasures.erasing_owner``; see ``forgetting``).
NOT_ERASING = "NOT EXISTS (SELECT 1 FROM {erasures} WHERE erasing_owner = %(erasing)s)"
CREDENTIAL_OK = (
    "(%(credential)s IS NULL OR EXISTS (SELECT 1 FROM {credentials}"
    " WHERE key_id = %(credential)s AND revoked_at IS NULL"
    " AND (expires_at IS NULL OR expires_at > {now}){share}))"
    " AND " + NOT_ERASING
)
CREDENTIAL_STATE = (
    "SELECT revoked_at IS NOT NULL, expires_at IS NOT NULL AND expires_at <= {now}"
    " FROM {credentials} WHERE key_id = %(credential)s"
)

# -- the chronicum ---------------------------------------------------------------

GET = "SELECT owner_id, started_at, last_activity_at FROM {chronica} WHERE id = %(chronicum_id)s"

CREATE = """
INSERT INTO {chronica} (id, owner_id, started_at, last_activity_at)
VALUES (%(chronicum_id)s, %(owner_id)s, %(started_at)s, %(last_activity_at)s)
ON CONFLICT (id) DO NOTHING
"""

# The owner's chronica, latest activity first, ties by ID: the first condition of a
# later page lets the index seek to its start, the second settles ties.
LIST = """
SELECT id, owner_id, started_at, last_activity_at FROM {chronica}
WHERE owner_id = %(owner_id)s{{after}}
ORDER BY last_activity_at DESC, id LIMIT %(limit)s
"""
LIST_AFTER = " AND last_activity_at <= %(at)s AND (last_activity_at < %(at)s OR id > %(after_id)s)"

OWNED = "EXISTS (SELECT 1 FROM {chronica} WHERE id = %(chronicum_id)s AND owner_id = %(owner_id)s)"
EXISTING = "EXISTS (SELECT 1 FROM {chronica} WHERE id = %(chronicum_id)s)"

# The chronicum's row lock (SQLite: the database's write lock, a write first) if it is
# the owner's (any owner's for NULL): what a delete, a pop or a write holds.
LOCK = (
    "UPDATE {chronica} SET owner_id = owner_id"
    " WHERE id = %(chronicum_id)s AND owner_id = COALESCE(%(owner_id)s, owner_id)"
    " AND {credential_ok}"
)
# A write's acta, one by one, and the chronicum bumped to their moment (the plain
# dialect's write; the vendors' write a batch in one statement).
INSERT = """
INSERT INTO {acta} ({insert_columns}) VALUES (%(id)s, %(chronicum_id)s, %(kind)s,
    %(actor_kind)s, %(actor)s, %(content)s, %(at)s, %(call_id)s, %(data)s, %(tokens)s,
    %(key)s, %(recorded_by)s)
"""
BUMP = "UPDATE {chronica} SET last_activity_at = %(at)s WHERE id = %(chronicum_id)s"
DELETE_ACTA = "DELETE FROM {acta} WHERE {chronicum_is}"
DELETE_CHRONICUM = "DELETE FROM {chronica} WHERE id = %(chronicum_id)s"
# The newest actum, removed in the statement that finds it (the lock is held).
POP = """
DELETE FROM {acta} WHERE {chronicum_is} AND seq = (
    SELECT seq FROM {acta} WHERE {chronicum_is} ORDER BY chronicum_id DESC, seq DESC LIMIT 1
) RETURNING {columns}
"""

# Redaction: the actum's content and data emptied, its token count zero, in the
# statement that checks the owner; a second redaction keeps the first's moment and reason.
REDACT = """
UPDATE {acta} SET content = '', data = NULL, tokens = 0,
    redacted_reason = CASE WHEN redacted_at IS NULL THEN %(reason)s ELSE redacted_reason END,
    redacted_at = COALESCE(redacted_at, %(at)s)
WHERE {chronicum_is} AND id = %(actum_id)s AND {owned}
RETURNING {columns}
"""

# The batch a keyed write stored: the keyed actum and "<key>\n<position>" for the rest,
# read with the owner's check (the chronicum may have changed hands since the write).
BY_KEY = """
SELECT {columns} FROM {acta}
WHERE chronicum_id = %(chronicum_id)s AND {owned}
  AND (idempotency_key = %(key)s OR substr(idempotency_key, 1, %(prefix_length)s) = %(prefix)s)
ORDER BY seq
"""

# -- the context window -------------------------------------------------------------

# Whether the chronicum is there (and the owner's), and where ``before`` stands, in the
# same statement as the window: an empty window and a missing chronicum are told
# apart, and an actum named by ``before`` that is not there is an error, not [].
_FOUND = "SELECT {owned} AS w_found, {{w_before}} AS w_before"
# The windows without a token budget read the acta joined to the chronicum's own row,
# the owner's (any owner's where the owner is NULL): no row at all for a missing
# chronicum or another owner's, one row of NULLs for an empty window. One lookup of
# the chronicum, and a statement PostgreSQL plans in about two thirds of the time of
# the EXISTS check made twice (``_FOUND``'s and the acta's).
_OF_CHRONICUM = " WHERE c.id = %(chronicum_id)s{c_owned}"
BEFORE_SEQ = (
    "(SELECT MIN(seq) FROM {acta} WHERE chronicum_id = %(chronicum_id)s AND id = %(before)s)"
)
BEFORE = " AND seq < " + BEFORE_SEQ

# The newest acta that pass the filters, up to the limit: newest first, read by a
# backward walk of the (chronicum_id, seq) index (the two-column ORDER BY is an order
# only that index serves). With a limit of last_n + 1, the extra row says that an
# older page exists.
WINDOW = (
    "SELECT 1 AS w_found, {{w_before}} AS w_before, NULL, w.* FROM {chronica} c LEFT JOIN ("
    "SELECT {columns}, seq AS w_seq FROM {acta}"
    " WHERE {chronicum_is}{{filters}}{{before}}"
    " ORDER BY chronicum_id DESC, seq DESC{{limit}}"
    ") w ON 1 = 1" + _OF_CHRONICUM + " ORDER BY w.w_seq DESC"
)

# With a byte budget and a limit of at most BYTES_WINDOW_ROWS: the plain window (the
# newest acta, up to the limit + 1) joined to the chronicum's row, then the running
# total of their sizes, newest first, over the joined rows (the outer query's window:
# PostgreSQL plans it in about two thirds of the time of WINDOW_WITHIN_BYTES_CUT's
# window in a subquery under the join). An actum fits within the budget, or as the
# newest; the content and data of one that does not are not sent: the database sends
# about the budget, whatever the acta weigh. The first that does not fit says that an
# older page exists; the rows after it (at most the limit's) come without their content
# and are not part of the page. The sizes are octet lengths (PostgreSQL: of content,
# read without detoasting it).
WINDOW_WITHIN_BYTES = (
    "SELECT 1 AS w_found, {{w_before}} AS w_before, {fits}, {fitting_columns}, r.w_seq"
    " FROM {chronica} c LEFT JOIN ("
    "SELECT {columns}, seq AS w_seq, {size} AS w_size FROM {acta}"
    " WHERE {chronicum_is}{{filters}}{{before}}"
    " ORDER BY chronicum_id DESC, seq DESC{{limit}}"
    ") r ON 1 = 1"
    + _OF_CHRONICUM
    + " WINDOW w AS (ORDER BY r.w_seq DESC ROWS UNBOUNDED PRECEDING) ORDER BY r.w_seq DESC"
)
# Whether an actum of WINDOW_WITHIN_BYTES fits: within the budget, or the newest.
FITS = "(SUM(r.w_size) OVER w <= %(max_bytes)s OR COUNT(*) OVER w = 1)"
BYTES_WINDOW_ROWS = 1000
"""The largest limit WINDOW_WITHIN_BYTES serves (the API's default, API_MAX_ACTA)."""

# With a byte budget and no limit (or a larger one): the running total over the acta in
# the order of the index that reads them (a window in the subquery: no sort), and of
# those only the acta that fit, then the first that does not (its content and data not
# sent), whatever the chronicum holds past it.
WINDOW_WITHIN_BYTES_CUT = (
    "SELECT 1 AS w_found, {{w_before}} AS w_before, {fits_cut}, {fitting_columns_cut}, r.w_seq"
    " FROM {chronica} c LEFT JOIN ("
    "SELECT {columns}, w_seq, w_size,"
    " SUM(w_size) OVER w AS w_used, COUNT(*) OVER w AS w_n FROM ("
    "SELECT {columns}, chronicum_id AS w_chronicum, seq AS w_seq, {size} AS w_size FROM {acta}"
    " WHERE {chronicum_is}{{filters}}{{before}}"
    " ORDER BY chronicum_id DESC, seq DESC{{limit}}"
    ") s WINDOW w AS (ORDER BY w_chronicum DESC, w_seq DESC ROWS UNBOUNDED PRECEDING)"
    ") r ON r.w_n <= 2 OR r.w_used - r.w_size <= %(max_bytes)s"
    + _OF_CHRONICUM
    + " ORDER BY r.w_seq DESC"
)
FITS_CUT = "(r.w_used <= %(max_bytes)s OR r.w_n = 1)"


# With a token budget: a walk back from the newest actum one index probe at a time,
# with running sums of tokens and bytes, that stops one actum past the first that does
# not fit (or past last_n): its time grows with the window, not with the chronicum.
# The actum it stopped at says that an older page exists.
WINDOW_WITHIN_TOKENS = (
    """
WITH RECURSIVE w(w_seq, w_used, w_bytes, w_n) AS (
    SELECT a.seq, {count}, {a_size}, 1 FROM {acta} a WHERE a.{chronicum_is} AND a.seq = (
        SELECT seq FROM {acta} WHERE {chronicum_is} AND {owned}{{filters}}{{before}}
        ORDER BY chronicum_id DESC, seq DESC LIMIT 1)
    UNION ALL
    SELECT a.seq, w.w_used + {count}, w.w_bytes + {a_size}, w.w_n + 1
    FROM w JOIN {acta} a ON a.{chronicum_is} AND a.seq = (
        SELECT seq FROM {acta} WHERE {chronicum_is}{{filters}} AND seq < w.w_seq
        ORDER BY chronicum_id DESC, seq DESC LIMIT 1)
    WHERE {{fits}}
)
SELECT o.w_found, o.w_before, EXISTS (SELECT 1 FROM w WHERE NOT ({{fits}})), k.*
FROM ("""
    + _FOUND
    + """) o LEFT JOIN (
    SELECT {a_columns}, a.seq AS w_seq FROM w JOIN {acta} a
    ON a.{chronicum_is} AND a.seq = w.w_seq WHERE {{fits}}
) k ON 1 = 1 ORDER BY k.w_seq DESC
"""
)

# -- following ------------------------------------------------------------------------

# The acta after a position (seq) that pass the filters, at most a limit, with the
# owner's check and the newest seq in the same statement (the same snapshot). The
# position may be an actum's (its seq read here too).
AFTER = """
SELECT o.w_found, o.w_top, o.w_from, p.*
FROM (SELECT {owned} AS w_found, ({newest}) AS w_top, {{start}} AS w_from) o
LEFT JOIN (
    SELECT {columns}, seq AS w_seq FROM {acta}
    WHERE {chronicum_is} AND seq > {{start}}{{filters}} AND {owned}
    ORDER BY chronicum_id, seq LIMIT %(limit)s
) p ON 1 = 1
ORDER BY p.w_seq
"""
NEWEST = "SELECT MAX(seq) FROM {acta} WHERE {chronicum_is}"
AFTER_ACTUM = (
    "(SELECT MAX(seq) FROM {acta} WHERE chronicum_id = %(chronicum_id)s AND id = %(after)s)"
)

# With a byte budget: the sizes of the next acta first, then only those that fit (the
# first always) read whole; "cut" tells that some did not.
AFTER_WITHIN_BYTES = """
WITH s AS (
    SELECT seq AS w_seq, {size} AS w_size FROM {acta}
    WHERE {chronicum_is} AND seq > {{start}}{{filters}} AND {owned}
    ORDER BY chronicum_id, seq LIMIT %(limit)s
), c AS (
    SELECT w_seq FROM (
        SELECT w_seq, SUM(w_size) OVER (ORDER BY w_seq ROWS UNBOUNDED PRECEDING) AS w_used,
               ROW_NUMBER() OVER (ORDER BY w_seq) AS w_n
        FROM s
    ) r WHERE r.w_used <= %(max_bytes)s OR r.w_n = 1
)
SELECT o.w_found, o.w_top, o.w_from, (SELECT COUNT(*) FROM s) > (SELECT COUNT(*) FROM c), p.*
FROM (SELECT {owned} AS w_found, ({newest}) AS w_top, {{start}} AS w_from) o
LEFT JOIN (
    SELECT {a_columns}, a.seq AS w_seq FROM {acta} a JOIN c
    ON a.{chronicum_is} AND a.seq = c.w_seq
) p ON 1 = 1
ORDER BY p.w_seq
"""

# -- chronica_purge ---------------------------------------------------------------------

COUNT_ACTA = "SELECT COUNT(*) FROM {acta} WHERE {chronicum_is}"
COUNT_ACTA_UP_TO = (
    "SELECT COUNT(*) FROM (SELECT 1 FROM {acta} WHERE {chronicum_is} LIMIT %(most)s) AS up_to"
)
DELETE_OLDEST = """
DELETE FROM {acta} WHERE {chronicum_is} AND seq IN (
    SELECT seq FROM {acta} WHERE {chronicum_is} ORDER BY chronicum_id, seq LIMIT %(count)s
)
"""


_NO_LIMIT = 2**63 - 1


def row_limit(last_n: int) -> int | None:
    """``last_n`` as a ``LIMIT``: ``None`` beyond any BIGINT, which the database would
    refuse as out of range (no limit is what the caller asked for)."""
    return last_n if 0 < last_n < _NO_LIMIT else None


def filters(query: ActaQuery) -> tuple[str, dict[str, Any]]:
    """The conditions the query's filters put on the acta (each `` AND column IN (...)``)
    and their parameters: the one place a filter becomes SQL."""
    where: list[str] = []
    params: dict[str, Any] = {}
    for declared in FILTERS:
        values = sorted(str(v) for v in getattr(query, declared.field))
        if values:
            names = [f"{declared.name}_{i}" for i in range(len(values))]
            listed = ", ".join(f"%({name})s" for name in names)
            where.append(f" AND {declared.attribute} IN ({listed})")
            params.update(zip(names, values, strict=True))
    return "".join(where), params


def fitting(fits: str) -> str:
    """The actum's columns of a byte-budget window: content and data only if it ``fits``."""
    return ", ".join(
        f"CASE WHEN {fits} THEN r.{column} END" if column in ("content", "data") else "r." + column
        for column in ACTUM_COLUMNS
    )


def before_fields(tables: dict[str, str], before: str | None) -> dict[str, str]:
    """The fields a window's template leaves for ``before``: its condition on the acta
    (``{before}``) and where it stands (``{w_before}``); none and ``NULL`` without it."""
    if before is None:
        return {"before": "", "w_before": "NULL"}
    return {"before": BEFORE.format(**tables), "w_before": BEFORE_SEQ.format(**tables)}
