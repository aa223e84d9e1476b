"""PostgreSQL: this migration created ``chronica_read_state``, a PL/pgSQL function for an
agent framework's session read. Migration 0010 drops it: the read is one plain
statement now. A new database skips it."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("chronica", "0006_agent_credentials"),
    ]

    operations: list[migrations.operations.base.Operation] = []
