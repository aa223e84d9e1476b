"""Agent credentials (issue 21): the table of the credentials an owner issues to its
agents (the secret stored only as a hash), and ``acta.recorded_by``, who wrote each
actum: nullable, so writers that know only the seed's columns (and migration 0004's
PostgreSQL functions, which the unattested writes still call) keep working."""

from django.db import migrations, models

from chronica.stores.db.functions_0006 import DROP, RECORD_ACTA_BY, RECORD_ACTUM_BY


def create_functions(apps, schema_editor):
    # PostgreSQL: migration 0004's writes with recorded_by (chronica.stores.db.functions_0006).
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(RECORD_ACTUM_BY)
        schema_editor.execute(RECORD_ACTA_BY)


def drop_functions(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [
        ("chronica", "0005_state"),
    ]

    operations = [
        migrations.CreateModel(
            name="AgentCredential",
            fields=[
                (
                    "key_id",
                    models.CharField(
                        max_length=32, primary_key=True, serialize=False, verbose_name="key ID"
                    ),
                ),
                ("secret_hash", models.CharField(max_length=128, verbose_name="secret hash")),
                ("owner_id", models.CharField(db_index=True, max_length=255, verbose_name="owner")),
                ("actor", models.CharField(max_length=255)),
                ("actor_kinds", models.JSONField(default=list, verbose_name="actor kinds")),
                (
                    "chronica",
                    models.JSONField(
                        blank=True,
                        help_text="The chronicum IDs it may use; empty: all the owner's.",
                        null=True,
                    ),
                ),
                ("may_list", models.BooleanField(default=False, verbose_name="may list")),
                ("may_delete", models.BooleanField(default=False, verbose_name="may delete")),
                ("may_pop", models.BooleanField(default=False, verbose_name="may pop")),
                ("created_at", models.DateTimeField(verbose_name="created")),
                ("expires_at", models.DateTimeField(blank=True, null=True, verbose_name="expires")),
                ("revoked_at", models.DateTimeField(blank=True, null=True, verbose_name="revoked")),
                (
                    "last_used_at",
                    models.DateTimeField(blank=True, null=True, verbose_name="last used"),
                ),
            ],
            options={
                "verbose_name": "agent credential",
                "db_table": "chronica_agent_credentials",
                "ordering": ["-created_at"],
            },
        ),
        migrations.AddField(
            model_name="actum",
            name="recorded_by",
            field=models.CharField(
                blank=True, max_length=255, null=True, verbose_name="recorded by"
            ),
        ),
        migrations.RunPython(create_functions, drop_functions, elidable=False),
    ]
