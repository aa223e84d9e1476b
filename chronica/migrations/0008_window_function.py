"""PostgreSQL only: the plain context window (``get_acta`` with filters and ``last_n``,
no token budget, no ``before``) as one PL/pgSQL function, ``chronica_window``.

The window as one statement is planned anew at every call, since Django binds
parameters on the client and prepares nothing (so that transaction-pooling poolers
keep working); planning was a third of the statement's server time. PL/pgSQL keeps
the plans of a function's statements for the session, through any pooler, and runs
them here on generic plans (``plan_cache_mode``; the reasons are migration 0007's):
the owner's row, then the backward scan of the ``(chronicum_id, seq)`` index with the
filters, whatever the chronicum's length. STABLE: both statements see the calling
statement's snapshot, so the acta read are those of the chronicum whose owner was
checked, as in the one statement (a delete and a re-create by another owner between
them cannot mix two chronica). Each names the chronicum by equality (``id =``,
``chronicum_id = ANY(ARRAY[p_chronicum::text])``), so a partitioned table is read in
one partition (``tests/stores/test_partitions.py``).

A connection that prepares its statements (``OPTIONS`` ``server_side_binding``) calls
it too: the prepared call ran faster than the prepared statement. Other databases:
nothing to do (the store reads with its statement there).
"""

from django.db import migrations

from chronica.stores.db.functions_0008 import DROP, WINDOW


def create_functions(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(WINDOW)


def drop_functions(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [
        ("chronica", "0007_read_state_function"),
    ]

    operations = [
        migrations.RunPython(create_functions, drop_functions, elidable=False),
    ]
