"""The PL/pgSQL function of migration 0007, frozen: the text it creates, byte for byte.
The text never changes (see ``functions_0004``); what it does, and why, is in the
migration's docstring."""

__all__ = ["DROP", "READ_STATE"]

ACTA = "acta"  # the tables' names (db_table in 0001_initial and 0005_state)
CHRONICA = "chronica"
STATES = "chronica_states"

# The state of a chronicum of p_owner in p_namespace and the two shared documents in
# one first row (the acta's columns NULL), then, only when the chronicum is p_owner's,
# its newest p_limit acta (NULL: all), newest first, the state's columns NULL. STABLE:
# every statement of it sees the calling statement's snapshot. Generic plans, kept for
# the session: the window's, a backward scan of the (chronicum_id, seq) index, is then
# planned once (left to choose, PostgreSQL re-plans it at every call: with LIMIT $n its
# generic estimate is a tenth of the rows). `= ANY(ARRAY[p::text])`, not `= p`: after a
# plain `=` the planner may walk the primary key backwards instead (BaseDialect's
# chronicum_is); the cast to text lets partitioned tables prune the plan to one
# partition at run time (without it, `varchar[]` is coerced and nothing is pruned).
READ_STATE = f"""
CREATE OR REPLACE FUNCTION chronica_read_state(p_namespace varchar, p_owner varchar,
    p_chronicum varchar, p_limit bigint)
RETURNS TABLE (r_started_at bigint, r_last_activity_at bigint, r_namespace varchar,
    r_state jsonb, r_mine jsonb, r_shared jsonb, r_id varchar, r_kind varchar,
    r_actor_kind varchar, r_actor varchar, r_content text, r_at bigint, r_call_id varchar,
    r_data jsonb, r_recorded_by varchar)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    SELECT (EXTRACT(EPOCH FROM c.started_at) * 1000000)::bigint,
           (EXTRACT(EPOCH FROM c.last_activity_at) * 1000000)::bigint, c.namespace, c.state
    INTO r_started_at, r_last_activity_at, r_namespace, r_state
    FROM {CHRONICA} c WHERE c.id = p_chronicum AND c.owner_id = p_owner;
    SELECT s.value INTO r_mine FROM {STATES} s
    WHERE s.namespace = p_namespace AND s.owner_id = p_owner;
    SELECT s.value INTO r_shared FROM {STATES} s
    WHERE s.namespace = p_namespace AND s.owner_id = '';
    RETURN NEXT;
    IF r_started_at IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT NULL::bigint, NULL::bigint, NULL::varchar, NULL::jsonb, NULL::jsonb, NULL::jsonb,
           a.id, a.kind, a.actor_kind, a.actor, a.content,
           (EXTRACT(EPOCH FROM a.at) * 1000000)::bigint, a.call_id, a.data, a.recorded_by
    FROM {ACTA} a WHERE a.chronicum_id = ANY(ARRAY[p_chronicum::text])
    ORDER BY a.chronicum_id DESC, a.seq DESC LIMIT p_limit;
END
$$
"""

DROP = "DROP FUNCTION IF EXISTS chronica_read_state(varchar, varchar, varchar, bigint);"
