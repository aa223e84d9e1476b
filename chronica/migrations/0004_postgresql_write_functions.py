"""PostgreSQL only: the common writes as PL/pgSQL functions.

Django binds parameters on the client and turns psycopg's prepared statements off
(so that transaction-pooling poolers keep working), so PostgreSQL plans every
statement it is sent, every time: for a one-actum write, planning the statement took
more time than running it. PL/pgSQL keeps the plans of a function's statements for
the session, and a function call works through any pooler. The functions do what
chronica's single-statement writes did, in the same order: lock and bump the
chronicum (owner-checked when an owner is given), insert the acta after it with the
lock held, and send the chronicum's NOTIFY only when some process follows it.

Other databases: nothing to do (the writes there are plain statements).
"""

from django.db import migrations

_FOLLOWED = 0x63726F6E  # chronica.stores.db._FOLLOWED: the advisory lock a follower holds
_ACTA = "acta"  # the tables' names (db_table in 0001_initial)
_CHRONICA = "chronica"

# Both functions: lock and bump the chronicum (owner-checked when p_owner is not NULL),
# insert after it with the lock held, NOTIFY when followed. OUT parameters: (micros of
# the write's timestamp since the epoch, whether the chronicum was found, true). Not
# found: (NULL, false, NULL), nothing written.
_FUNCTION = """
CREATE OR REPLACE FUNCTION {name}(
    p_chronicum varchar, p_owner varchar, {params},
    OUT o_micros bigint, OUT o_found boolean, OUT o_notified boolean)
LANGUAGE plpgsql AS $$
DECLARE
    v_at timestamptz;
BEGIN
    UPDATE {chronica} SET last_activity_at = clock_timestamp()
    WHERE id = p_chronicum AND (p_owner IS NULL OR owner_id = p_owner)
    RETURNING last_activity_at INTO v_at;
    IF NOT FOUND THEN
        o_found := false;
        RETURN;
    END IF;
    INSERT INTO {acta} (id, chronicum_id, kind, actor_kind, actor, content, at, call_id,
                      data, tokens)
    {insert};
    o_micros := (EXTRACT(EPOCH FROM v_at) * 1000000)::bigint;
    o_found := true;
    IF NOT pg_try_advisory_xact_lock({followed}, hashtext(p_chronicum)) THEN
        PERFORM pg_notify('chronica', p_chronicum);
    END IF;
    o_notified := true;
END
$$
"""

RECORD_ACTUM = _FUNCTION.format(
    name="chronica_record_actum",
    params="p_id varchar, p_kind varchar, p_actor_kind varchar, p_actor varchar,"
    " p_content text, p_call_id varchar, p_data text, p_tokens bigint",
    insert="VALUES (p_id, p_chronicum, p_kind, p_actor_kind, p_actor, p_content, v_at,"
    " p_call_id, p_data::jsonb, p_tokens)",
    acta=_ACTA,
    chronica=_CHRONICA,
    followed=_FOLLOWED,
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
    acta=_ACTA,
    chronica=_CHRONICA,
    followed=_FOLLOWED,
)

DROP = """
DROP FUNCTION IF EXISTS chronica_record_actum(varchar, varchar, varchar, varchar, varchar,
    varchar, text, varchar, text, bigint);
DROP FUNCTION IF EXISTS chronica_record_acta(varchar, varchar, json);
"""


def create_functions(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(RECORD_ACTUM)
        schema_editor.execute(RECORD_ACTA)


def drop_functions(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [
        ("chronica", "0003_pydantic_ai"),
    ]

    operations = [
        migrations.RunPython(create_functions, drop_functions, elidable=False),
    ]
