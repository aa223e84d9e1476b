"""The PL/pgSQL function of migration 0008, frozen: the text it creates, byte for byte.
The text never changes (see ``functions_0004``); what it does, and why, is in the
migration's docstring."""

__all__ = ["DROP", "WINDOW"]

ACTA = "acta"  # the tables' names (db_table in 0001_initial)
CHRONICA = "chronica"

# The newest p_limit acta (NULL: all) of p_owner's chronicum that pass the filters (NULL:
# any), newest first, their times as ISO 8601 text in UTC (postgresql.ISO_AT); nothing
# when the chronicum is not p_owner's. STABLE: both statements see the calling
# statement's snapshot, so the owner checked is the owner of the acta read. Generic
# plans kept for the session (as chronica_read_state's, migration 0007): the backward
# scan of the (chronicum_id, seq) index, the filters on it; named by
# `= ANY(ARRAY[p::text])` for the same two reasons as there.
WINDOW = f"""
CREATE OR REPLACE FUNCTION chronica_window(p_owner varchar, p_chronicum varchar,
    p_kinds text[], p_actor_kinds text[], p_actors text[], p_limit bigint)
RETURNS TABLE (r_id varchar, r_kind varchar, r_actor_kind varchar, r_actor varchar,
    r_content text, r_at text, r_call_id varchar, r_data jsonb, r_recorded_by varchar)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM {CHRONICA} c WHERE c.id = p_chronicum AND c.owner_id = p_owner)
    THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT a.id, a.kind, a.actor_kind, a.actor, a.content,
           to_char(a.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"'), a.call_id,
           a.data, a.recorded_by
    FROM {ACTA} a WHERE a.chronicum_id = ANY(ARRAY[p_chronicum::text])
      AND (p_kinds IS NULL OR a.kind = ANY(p_kinds))
      AND (p_actor_kinds IS NULL OR a.actor_kind = ANY(p_actor_kinds))
      AND (p_actors IS NULL OR a.actor = ANY(p_actors))
    ORDER BY a.chronicum_id DESC, a.seq DESC LIMIT p_limit;
END
$$
"""

DROP = "DROP FUNCTION IF EXISTS chronica_window(varchar, varchar, text[], text[], text[], bigint);"
