"""PostgreSQL only: the common write and the owner's check as PL/pgSQL functions.

Django binds parameters on the client and turns psycopg's prepared statements off
(so that transaction-pooling poolers keep working), so PostgreSQL plans every
statement it is sent, every time: for a one-actum write, planning the statement took
more time than running it, and a window's owner check (a subquery) was half of the
window's planning. PL/pgSQL keeps the plans of a function's statements for the
session, and a function call works through any pooler.

- ``chronica_record_actum`` and ``chronica_record_acta`` do what chronica's
  single-statement writes do, in the same order: lock and bump the chronicum
  (owner-checked when an owner is given), insert the acta after it with the lock
  held, and send the chronicum's NOTIFY only when some process follows it. Each
  returns one scalar, so that the statement that calls it is ``SELECT f(...)``, the
  cheapest statement PostgreSQL plans: the write's time as microseconds since the
  epoch, or NULL when there is no such chronicum (of that owner) and nothing was
  written.
- ``chronica_owns(chronicum, owner)`` is whether that chronicum is that owner's. A
  window calls it with constant arguments, so PostgreSQL runs it once, as a filter
  in front of the index scan, in the window's own snapshot (it is STABLE).

Other databases: nothing to do (the writes there are plain statements).
"""

from django.db import migrations

_FOLLOWED = 0x63726F6E  # chronica.stores.db._FOLLOWED: the advisory lock a follower holds
_ACTA = "acta"  # the tables' names (db_table in 0001_initial)
_CHRONICA = "chronica"

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

OWNS = f"""
CREATE OR REPLACE FUNCTION chronica_owns(p_chronicum varchar, p_owner varchar)
RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM {_CHRONICA} WHERE id = p_chronicum AND owner_id = p_owner);
END
$$
"""

DROP = """
DROP FUNCTION IF EXISTS chronica_record_actum(varchar, varchar, varchar, varchar, varchar,
    varchar, text, varchar, text, bigint);
DROP FUNCTION IF EXISTS chronica_record_acta(varchar, varchar, json);
DROP FUNCTION IF EXISTS chronica_owns(varchar, varchar);
"""


def create_functions(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        # Dropped first: a database that ran an earlier draft of this migration has
        # functions of these names that return a row; CREATE OR REPLACE cannot change that.
        schema_editor.execute(DROP)
        schema_editor.execute(RECORD_ACTUM)
        schema_editor.execute(RECORD_ACTA)
        schema_editor.execute(OWNS)


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
