"""PostgreSQL: drop the PL/pgSQL functions of migrations 0004, 0006, 0007 and 0008.

Every write and every read of chronica is a plain statement now (one per write on
PostgreSQL, one per window), so the functions are unused. Dropped ``IF EXISTS``: a
database made after those migrations became empty never had them. Migrating back
does not make them again; the code of that release reads and writes without them
where they are missing.
"""

from django.db import migrations

DROP = """
DROP FUNCTION IF EXISTS chronica_record_actum(varchar, varchar, varchar, varchar, varchar,
    varchar, text, varchar, text, bigint);
DROP FUNCTION IF EXISTS chronica_record_acta(varchar, varchar, json);
DROP FUNCTION IF EXISTS chronica_owns(varchar, varchar);
DROP FUNCTION IF EXISTS chronica_record_actum_by(varchar, varchar, varchar, varchar, varchar,
    varchar, text, varchar, text, bigint, varchar);
DROP FUNCTION IF EXISTS chronica_record_acta_by(varchar, varchar, json);
DROP FUNCTION IF EXISTS chronica_read_state(varchar, varchar, varchar, bigint);
DROP FUNCTION IF EXISTS chronica_window(varchar, varchar, text[], text[], text[], bigint);
"""


def drop_functions(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [
        ("chronica", "0009_pydantic_ai_tables_move"),
    ]

    operations = [
        migrations.RunPython(drop_functions, migrations.RunPython.noop, elidable=True),
    ]
