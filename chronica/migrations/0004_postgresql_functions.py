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

from chronica.stores.db.functions_0004 import DROP, OWNS, RECORD_ACTA, RECORD_ACTUM


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
