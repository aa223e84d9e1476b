"""The SQL of compaction and fork, as templates like those of ``sql`` (formatted once per
dialect by ``base.BaseDialect``).

A compaction's acta carry ``compacts`` (the ID of the actum they compact through) and
one ``at``, later than that of every earlier compaction of the chronicum: the acta of
the newest compaction are the compaction acta (``compacts IS NOT NULL``) of the newest
compaction's moment. The partial index ``acta_compactions`` finds that one in a probe.
"""

from __future__ import annotations

# The newest compaction actum of the chronicum: one probe of acta_compactions.
_newest_compaction = (
    "SELECT {column} FROM {acta} k WHERE k.{chronicum_is} AND k.compacts IS NOT NULL"
    " ORDER BY k.chronicum_id DESC, k.seq DESC LIMIT 1"
)

# The compacted view, as one more condition of a window or a follow (on the table {acta},
# unaliased): after the newest compaction's ``through`` (a through that is gone, purged,
# stands before every actum), an actum of no compaction or of the newest one. Both
# subqueries are uncorrelated: the database runs each once, and the window stays a walk
# back of the (chronicum_id, seq) index that ends at the through.
COMPACTED = (
    " AND seq > COALESCE((SELECT MIN(t.seq) FROM {acta} t"
    " WHERE t.chronicum_id = %(chronicum_id)s AND t.id = ("
    + _newest_compaction.replace("{column}", "k.compacts")
    + ")), 0) AND (compacts IS NULL OR at = ("
    + _newest_compaction.replace("{column}", "k.at")
    + "))"
)

# In the compacting transaction, the chronicum's lock held: whether ``through`` is an
# actum of the chronicum, the moment of the newest compaction, and now.
COMPACT_START = (
    "SELECT EXISTS (SELECT 1 FROM {acta} WHERE chronicum_id = %(chronicum_id)s"
    " AND id = %(through)s), (" + _newest_compaction.replace("{column}", "k.at") + "), {now}"
)

# A compaction's acta, one statement an actum (the plain dialect).
COMPACT_INSERT = """
INSERT INTO {acta} ({insert_columns}, compacts) VALUES (%(id)s, %(chronicum_id)s, %(kind)s,
    %(actor_kind)s, %(actor)s, %(content)s, %(at)s, %(call_id)s, %(data)s, %(tokens)s,
    %(key)s, %(recorded_by)s, %(through)s)
"""

# The batch in one statement, from one JSON array (``base.batch_json``), in its order.
COMPACT_INSERT_POSTGRESQL = """
INSERT INTO {acta} ({insert_columns}, compacts)
SELECT v.id, %(chronicum_id)s, v.kind, v.actor_kind, v.actor, v.content, %(at)s,
       v.call_id, v.data::jsonb, v.tokens, v.key, v.recorded_by, %(through)s
FROM ROWS FROM (json_to_recordset(%(acta)s::json) AS (id varchar, kind varchar,
    actor_kind varchar, actor varchar, content text, call_id varchar, data text,
    tokens bigint, recorded_by varchar, key varchar)) WITH ORDINALITY AS
    v(id, kind, actor_kind, actor, content, call_id, data, tokens, recorded_by, key, n)
ORDER BY v.n
"""
COMPACT_INSERT_SQLITE = """
INSERT INTO {acta} ({insert_columns}, compacts)
SELECT json_extract(v.value, '$.id'), %(chronicum_id)s, json_extract(v.value, '$.kind'),
       json_extract(v.value, '$.actor_kind'), json_extract(v.value, '$.actor'),
       json_extract(v.value, '$.content'), %(at)s, json_extract(v.value, '$.call_id'),
       json_extract(v.value, '$.data'), json_extract(v.value, '$.tokens'),
       json_extract(v.value, '$.key'), json_extract(v.value, '$.recorded_by'), %(through)s
FROM json_each(%(acta)s) v ORDER BY v.key
"""

# -- fork: one statement a table -----------------------------------------------------

# The new chronicum, made only from the owner's source, and only where ``through`` ("":
# none) is an actum of it.
FORK_CHRONICUM = """
INSERT INTO {chronica} (id, owner_id, started_at, last_activity_at)
SELECT %(new_id)s, c.owner_id, %(started_at)s, %(last_activity_at)s FROM {chronica} c
WHERE c.id = %(chronicum_id)s AND c.owner_id = %(owner_id)s
  AND (%(through)s = '' OR EXISTS (
      SELECT 1 FROM {acta} WHERE chronicum_id = %(chronicum_id)s AND id = %(through)s))
"""
# The copies, in write order, up to ``through``: every column but the ID (the MD5 of a
# random salt and the source's ID, so that ``compacts`` names the copy of its actum)
# and the idempotency key.
FORK_ACTA = """
INSERT INTO {acta} ({insert_columns}, compacts, redacted_at, redacted_reason)
SELECT md5(%(salt)s || a.id), %(new_id)s, a.kind, a.actor_kind, a.actor, a.content, a.at,
       a.call_id, a.data, a.tokens, NULL, a.recorded_by,
       CASE WHEN a.compacts IS NULL THEN NULL ELSE md5(%(salt)s || a.compacts) END,
       a.redacted_at, a.redacted_reason
FROM {acta} a
WHERE {a_chronicum_is} AND a.seq <= COALESCE((SELECT MIN(t.seq) FROM {acta} t
    WHERE t.chronicum_id = %(chronicum_id)s AND t.id = %(through)s), %(no_end)s)
ORDER BY a.chronicum_id, a.seq
"""
FORK_SOURCE = "SELECT 1 FROM {chronica} WHERE id = %(chronicum_id)s AND owner_id = %(owner_id)s"

# -- the compacted window -------------------------------------------------------------

# The compacted window in one walk back of the (chronicum_id, seq) index from the newest
# actum to the newest compaction's through (a through that is gone, or no compaction:
# from the start): the acta of no compaction and that compaction's own, newest first (at
# most the limit). The view puts the compaction's acta first, then the others in write
# order: ``compaction.window`` orders the rows so. The newest compaction (its through,
# its moment) is found once.
COMPACTED_WINDOW = (
    "WITH c AS MATERIALIZED ("
    + _newest_compaction.replace("{column}", "k.compacts AS c_through, k.at AS c_at")
    + ") SELECT o.w_found, v.* FROM (SELECT {owned} AS w_found) o LEFT JOIN ("
    "SELECT {a_columns}, a.seq AS w_seq, {count} AS w_tokens FROM {acta} a"
    " WHERE {a_chronicum_is} AND a.seq > COALESCE((SELECT MIN(t.seq) FROM {acta} t"
    " WHERE t.chronicum_id = %(chronicum_id)s AND t.id = (SELECT c_through FROM c)), 0)"
    " AND (a.compacts IS NULL OR a.at = (SELECT c_at FROM c)){{filters}}"
    " ORDER BY a.chronicum_id DESC, a.seq DESC{{limit}}"
    ") v ON 1 = 1 ORDER BY v.w_seq DESC"
)
