"""The PL/pgSQL functions of migration 0006, frozen: migration 0004's two writes with
``acta.recorded_by`` (who wrote the actum, issue 21), beside 0004's, which stay for the
unattested writes. The texts never change (see ``functions_0004``)."""

__all__ = ["DROP", "RECORD_ACTA_BY", "RECORD_ACTUM_BY"]

FOLLOWED = 0x63726F6E  # chronica.stores.listener.FOLLOWED
ACTA = "acta"
CHRONICA = "chronica"

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
                      data, tokens, recorded_by)
    {insert};
    IF NOT pg_try_advisory_xact_lock({followed}, hashtext(p_chronicum)) THEN
        PERFORM pg_notify('chronica', p_chronicum);
    END IF;
    RETURN (EXTRACT(EPOCH FROM v_at) * 1000000)::bigint;
END
$$
"""

RECORD_ACTUM_BY = _FUNCTION.format(
    name="chronica_record_actum_by",
    params="p_id varchar, p_kind varchar, p_actor_kind varchar, p_actor varchar,"
    " p_content text, p_call_id varchar, p_data text, p_tokens bigint, p_recorded_by varchar",
    insert="VALUES (p_id, p_chronicum, p_kind, p_actor_kind, p_actor, p_content, v_at,"
    " p_call_id, p_data::jsonb, p_tokens, p_recorded_by)",
    acta=ACTA,
    chronica=CHRONICA,
    followed=FOLLOWED,
)

RECORD_ACTA_BY = _FUNCTION.format(
    name="chronica_record_acta_by",
    params="p_acta json",
    insert="""SELECT v.id, p_chronicum, v.kind, v.actor_kind, v.actor, v.content, v_at, v.call_id,
           v.data::jsonb, v.tokens, v.recorded_by
    FROM ROWS FROM (json_to_recordset(p_acta) AS (id varchar, kind varchar,
         actor_kind varchar, actor varchar, content text, call_id varchar, data text,
         tokens bigint, recorded_by varchar)) WITH ORDINALITY AS v(id, kind, actor_kind,
         actor, content, call_id, data, tokens, recorded_by, n)
    ORDER BY v.n""",
    acta=ACTA,
    chronica=CHRONICA,
    followed=FOLLOWED,
)

DROP = """
DROP FUNCTION IF EXISTS chronica_record_actum_by(varchar, varchar, varchar, varchar, varchar,
    varchar, text, varchar, text, bigint, varchar);
DROP FUNCTION IF EXISTS chronica_record_acta_by(varchar, varchar, json);
"""
