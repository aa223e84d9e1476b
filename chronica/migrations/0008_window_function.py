"""PostgreSQL: this migration created ``chronica_window``, a PL/pgSQL function for the
plain window. Migration 0010 drops it: every window is one plain statement now. A new
database skips it."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("chronica", "0007_read_state_function"),
    ]

    operations: list[migrations.operations.base.Operation] = []
