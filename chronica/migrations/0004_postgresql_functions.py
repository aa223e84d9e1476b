"""PostgreSQL: this migration created PL/pgSQL functions for the writes and the owner's
check (``chronica_record_actum``, ``chronica_record_acta``, ``chronica_owns``).
Migration 0010 drops them: every write and read is a plain statement now. A new
database skips them; a database that has them loses them at 0010."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("chronica", "0003_pydantic_ai"),
    ]

    operations: list[migrations.operations.base.Operation] = []
