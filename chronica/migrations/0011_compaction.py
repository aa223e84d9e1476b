"""Compaction: ``acta.compacts``, on each actum of a compaction the ID of the actum it
compacts through (NULL on every other, so writers that know only the seed's columns
keep working), and a partial index of a chronicum's compactions."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("chronica", "0010_drop_functions"),
    ]

    operations = [
        migrations.AddField(
            model_name="actum",
            name="compacts",
            field=models.CharField(
                blank=True, max_length=255, null=True, verbose_name="compacts through"
            ),
        ),
        migrations.AddIndex(
            model_name="actum",
            index=models.Index(
                condition=models.Q(("compacts__isnull", False)),
                fields=["chronicum", "seq"],
                name="acta_compactions",
            ),
        ),
    ]
