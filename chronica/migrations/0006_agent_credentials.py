"""Agent credentials: the table of the credentials an owner issues to its agents (the
secret stored only as a hash), and ``acta.recorded_by``, who wrote each actum:
nullable, so writers that know only the seed's columns keep working.

(On PostgreSQL this migration also created the PL/pgSQL functions
``chronica_record_actum_by`` and ``chronica_record_acta_by``; migration 0010 drops
them, and a new database skips them.)"""

from django.db import migrations, models


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
    ]
