"""PostgreSQL only: an agent framework's session read (``aget_state`` with the newest
acta: the state of a chronicum, the owner's and the namespace's shared documents, and
the chronicum's newest N acta) as one PL/pgSQL function, ``chronica_read_state``.

The same read as one statement (a join of the state with the window) is planned anew
at every call, since Django binds parameters on the client and prepares nothing (so
that transaction-pooling poolers keep working): about 640 µs of server time and round
trip for a window of 20, where the function takes 260 to 380 µs (BENCHMARKS.md, issue
24). PL/pgSQL keeps the plans of a function's statements for the session, through any
pooler. The function runs them on generic plans (``plan_cache_mode``): with
``LIMIT $n`` PostgreSQL's generic estimate is a tenth of the rows, and left to choose
it would plan the window anew at every call. The window's generic plan is the
backward scan of the ``(chronicum_id, seq)`` index, whatever the chronicum's length:
it names the chronicum with ``= ANY(ARRAY[p_chronicum::text])`` (after a plain ``=``
the planner may walk the primary key backwards instead: ``BaseDialect.chronicum_is``),
and the cast to text is what lets a partitioned table prune the plan to one partition
at run time. The function is STABLE: each of its statements sees the calling
statement's snapshot, as the one statement did.

Its first row is the state (the acta's columns NULL); then, only when the chronicum is
the owner's (the same owner check as the statement's), its newest acta, newest first.
Each statement names the chronicum by equality (``id =``, ``chronicum_id = ANY``), so
that partitioned tables are read in one partition (``tests/stores/test_partitions.py``).

Other databases: nothing to do (the store reads with its statements there).
"""

from django.db import migrations

from chronica.stores.db.functions_0007 import DROP, READ_STATE


def create_functions(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(READ_STATE)


def drop_functions(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [
        ("chronica", "0006_agent_credentials"),
    ]

    operations = [
        migrations.RunPython(create_functions, drop_functions, elidable=False),
    ]
