"""The tables of PydanticAI's conversations, taken over from the ``chronica`` app.

A database migrated before the move has them (``chronica`` migration 0003 created
them): this migration only records them in this app's state. A database that lacks
them gets them here.
"""

import django.db.models.deletion
from django.db import migrations, models


def create_missing_tables(apps, schema_editor):
    existing = set(schema_editor.connection.introspection.table_names())
    for name in ("PydanticAIConversation", "PydanticAIEntry"):
        model = apps.get_model("chronica_pydantic_ai", name)
        if model._meta.db_table not in existing:
            schema_editor.create_model(model)


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("chronica", "0009_pydantic_ai_tables_move"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="PydanticAIConversation",
                    fields=[
                        (
                            "conversation_id",
                            models.CharField(
                                max_length=255,
                                primary_key=True,
                                serialize=False,
                                verbose_name="conversation ID",
                            ),
                        ),
                        ("owner_id", models.CharField(max_length=255, verbose_name="owner")),
                        ("scope", models.CharField(blank=True, max_length=255, null=True)),
                        ("revision", models.CharField(max_length=255)),
                        ("updated_at", models.DateTimeField(verbose_name="updated")),
                        ("record", models.JSONField()),
                    ],
                    options={
                        "verbose_name": "PydanticAI conversation",
                        "db_table": "chronica_pydantic_ai_conversations",
                        "ordering": ["-updated_at"],
                        "indexes": [
                            models.Index(fields=["-updated_at"], name="pai_conversations_updated"),
                            models.Index(
                                fields=["scope", "-updated_at"], name="pai_conversations_scope"
                            ),
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="PydanticAIEntry",
                    fields=[
                        ("seq", models.BigAutoField(primary_key=True, serialize=False)),
                        ("entry_id", models.CharField(max_length=255, verbose_name="entry ID")),
                        (
                            "parent_id",
                            models.CharField(
                                blank=True,
                                max_length=255,
                                null=True,
                                verbose_name="parent entry ID",
                            ),
                        ),
                        ("actum_id", models.CharField(max_length=255, verbose_name="actum ID")),
                        (
                            "conversation",
                            models.ForeignKey(
                                db_column="conversation_id",
                                db_index=False,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="entries",
                                to="chronica_pydantic_ai.pydanticaiconversation",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "PydanticAI conversation entry",
                        "verbose_name_plural": "PydanticAI conversation entries",
                        "db_table": "chronica_pydantic_ai_entries",
                        "ordering": ["seq"],
                        "indexes": [
                            models.Index(
                                fields=["conversation", "seq"],
                                name="pai_entries_conversation_seq",
                            ),
                            models.Index(fields=["entry_id"], name="pai_entries_entry_id"),
                        ],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("conversation", "entry_id"),
                                name="pai_entries_conversation_entry",
                            )
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(create_missing_tables, migrations.RunPython.noop),
    ]
