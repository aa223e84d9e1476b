"""The PydanticAI integration's two tables move to its own app,
``chronica.integrations.pydantic_ai`` (label ``chronica_pydantic_ai``): they leave the
``chronica`` app's state here, and that app's first migration takes them over. Nothing
in the database changes: the tables keep their names, their rows and their indexes."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("chronica", "0008_window_function"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="PydanticAIEntry"),
                migrations.DeleteModel(name="PydanticAIConversation"),
            ],
            database_operations=[],
        ),
    ]
