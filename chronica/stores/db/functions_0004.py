"""The PL/pgSQL functions of migration 0004, frozen: the texts it creates, byte for byte.

A migration must do the same thing on every database, whenever it runs: these texts
never change, and so they name the tables and the follow lock as they were then, not
from ``_meta`` (``tests/stores/test_pg_functions.py`` checks both, and the texts' digests).
Functions that must change get new texts beside these and a migration of their own.
What each function does, and why it exists, is in the migration's docstring.
"""

__all__ = ["DROP", "OWNS", "RECORD_ACTA", "RECORD_ACTUM"]

FOLLOWED = 0x63726F6E  # chronica.stores.listener.FOLLOWED: the advisory lock a follower holds
ACTA = "acta"  # the tables' names (db_table in 0001_initial)
CHRONICA = "chronica"

# Both write functions: lock and bump the chronicum (owner-checked when p_owner is not
# NULL), insert after it with the lock held, NOTIFY when followed; the write's
# microseconds since the epoch, or NULL (nothing written) when the chronicum is not found.
_FUNCTION = """
CREATE OR REPLACE FUNCTION {name}(p_chronicum varchar, p_owner varchar, {params})
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_at timestamptz;
BEGIN
    UPDATE {chronica} SET last_activity_at = clock_timestamp()
    WHERE id = p_chronicum AND (p_owner IS NULL OR owner_id = p_owner)
    RETURNING last_activity_at INTO v_at;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    INSERT INTO {acta} (id, chronicum_id, kind, actor_kind, actor, content, at, call_id,
                      data, tokens)
    {insert};
    IF NOT pg_try_advisory_xact_lock({followed}, hashtext(p_chronicum)) THEN
        PERFORM pg_notify('chronica', p_chronicum);
    END IF;
    RETURN (EXTRACT(EPOCH FROM v_at) * 1000000)::bigint;
END
$$
"""

RECORD_ACTUM = _FUNCTION.format(
    name="chronica_record_actum",
    params="p_id varchar, p_kind varchar, p_actor_kind varchar, p_actor varchar,"
    " p_content text, p_call_id varchar, p_data text, p_tokens bigint",
    insert="VALUES (p_id, p_chronicum, p_kind, p_actor_kind, p_actor, p_content, v_at,"
    " p_call_id, p_data::jsonb, p_tokens)",
    acta=ACTA,
    chronica=CHRONICA,
    followed=FOLLOWED,
)

# A batch as one JSON array of objects (id, kind, actor_kind, actor, content,
# call_id, data as JSON text, tokens), inserted in the array's order.
RECORD_ACTA = _FUNCTION.format(
    name="chronica_record_acta",
    params="p_acta json",
    insert="""SELECT v.id, p_chronicum, v.kind, v.actor_kind, v.actor, v.content, v_at, v.call_id,
           v.data::jsonb, v.tokens
    FROM ROWS FROM (json_to_recordset(p_acta) AS (id varchar, kind varchar,
         actor_kind varchar, actor varchar, content text, call_id varchar, data text,
         tokens bigint)) WITH ORDINALITY AS v(id, kind, actor_kind, actor, content,
         call_id, data, tokens, n)
    ORDER BY v.n""",
    acta=ACTA,
    chronica=CHRONICA,
    followed=FOLLOWED,
)

OWNS = f"""
CREATE OR REPLACE FUNCTION chronica_owns(p_chronicum varchar, p_owner varchar)
RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM {CHRONICA} WHERE id = p_chronicum AND owner_id = p_owner);
END
$$
"""

DROP = """
DROP FUNCTION IF EXISTS chronica_record_actum(varchar, varchar, varchar, varchar, varchar,
    varchar, text, varchar, text, bigint);
DROP FUNCTION IF EXISTS chronica_record_acta(varchar, varchar, json);
DROP FUNCTION IF EXISTS chronica_owns(varchar, varchar);
"""
