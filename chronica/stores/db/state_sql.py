"""The SQL of state (``state``), as templates like those of ``sql`` (formatted once per
dialect by ``base.BaseDialect``)."""

from __future__ import annotations

# The chronicum's lock (a write: on SQLite it takes the database's write lock) and its
# state, in one statement.
STATE_LOCK = """
UPDATE {chronica} SET owner_id = owner_id WHERE id = %(chronicum_id)s AND owner_id = %(owner_id)s
    AND {credential_ok}
RETURNING namespace, state
"""

# What get_state reads of a chronicum and the two shared documents: one row (NULLs for
# what is not there).
_state_columns = """
SELECT c.started_at AS s_started_at, c.last_activity_at AS s_last_activity_at,
    c.namespace AS s_namespace, c.state AS s_state,
    (SELECT value FROM {states} WHERE namespace = %(namespace)s AND owner_id = %(owner_id)s)
        AS s_mine,
    (SELECT value FROM {states} WHERE namespace = %(namespace)s AND owner_id = '') AS s_shared"""
_state_from = """
FROM (SELECT 1 AS one) AS one
LEFT JOIN {chronica} c ON c.id = %(chronicum_id)s AND c.owner_id = %(owner_id)s
"""
STATE_READ = _state_columns + _state_from

# The same with the chronicum's newest acta (``{limit}``: the window's LIMIT or none),
# oldest first, joined to its row only where the owner's chronicum is: one row for each
# actum, or one with NULLs in their place. The plain window of ``get_state(acta=True)``
# in one join, planned in half the time of the state's row joined to a window statement
# that checks the chronicum itself (measured on ADK's session read: BENCHMARKS.md).
STATE_READ_ACTA = (
    _state_columns
    + ", w.*"
    + _state_from
    + """LEFT JOIN (
    SELECT {columns}, seq AS w_seq FROM {acta} WHERE {chronicum_is}
    ORDER BY chronicum_id DESC, seq DESC{{limit}}
) w ON c.id IS NOT NULL
ORDER BY w.w_seq
"""
)

# A namespace's chronica with their state, oldest activity first (every owner's, or one
# owner's), then its shared documents (every one, or one owner's and the namespace's).
_listing = (
    "SELECT id, owner_id, started_at, last_activity_at, state FROM {{chronica}}"
    " WHERE namespace = %(namespace)s{owner} ORDER BY last_activity_at, owner_id, id"
)
STATE_LISTING = _listing.format(owner="")
STATE_LISTING_MINE = _listing.format(owner=" AND owner_id = %(owner_id)s")
_shared = "SELECT owner_id, value FROM {{states}} WHERE namespace = %(namespace)s{owner}"
STATE_SHARED = _shared.format(owner="")
STATE_SHARED_MINE = _shared.format(owner=" AND owner_id IN (%(owner_id)s, '')")
