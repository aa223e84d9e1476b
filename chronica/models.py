"""The tables of the Django store: ``chronica`` and ``acta``, with the column names the
Go library of the same name uses, so that both can share the tables.

Only ``chronica.stores.db`` and the admin use these models; everything else
works with the value types of ``chronica``.
"""

from __future__ import annotations

from django.db import models

from .values import ActorKind, ActumKind


class Chronicum(models.Model):
    """One session, owned by one owner from its first actum."""

    id = models.CharField("ID", primary_key=True, max_length=255)
    owner_id = models.CharField("owner", max_length=255)
    started_at = models.DateTimeField("started")
    last_activity_at = models.DateTimeField("last activity", db_index=True)

    class Meta:
        db_table = "chronica"
        verbose_name = "chronicum"
        verbose_name_plural = "chronica"
        ordering = ["-last_activity_at"]
        # An owner's chronica, latest activity first, ties by ID: one index range per page.
        indexes = [
            models.Index(
                fields=["owner_id", "-last_activity_at", "id"], name="chronica_owner_activity"
            )
        ]

    def __str__(self) -> str:
        return self.id


class Actum(models.Model):
    """One thing that happened in a chronicum. ``seq`` is the only ordering key."""

    seq = models.BigAutoField(primary_key=True)
    id = models.CharField("ID", max_length=255)
    chronicum = models.ForeignKey(
        Chronicum,
        on_delete=models.CASCADE,
        related_name="acta",
        db_column="chronicum_id",
        db_index=False,  # covered by the (chronicum_id, seq) index
    )
    kind = models.CharField(max_length=16, choices=[(k.value, k.value) for k in ActumKind])
    actor_kind = models.CharField(
        "actor kind", max_length=16, choices=[(k.value, k.value) for k in ActorKind]
    )
    actor = models.CharField(max_length=255)
    content = models.TextField(blank=True)
    at = models.DateTimeField()
    # NULL, not "": the unique constraint must ignore acta recorded without a key.
    # Longer than a key may be: the second and later acta of a keyed batch carry
    # "<key>\n<position>" (a newline never occurs in a key), so one key names a batch.
    idempotency_key = models.CharField(  # noqa: DJ001
        "idempotency key", max_length=300, null=True, blank=True
    )
    # Added after the first release: a database default or NULL, so that a writer
    # that knows only the columns above still inserts rows that read back.
    call_id = models.CharField("call ID", max_length=255, blank=True, default="", db_default="")
    data = models.JSONField(null=True, blank=True)
    tokens = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="The token count taken when the actum was recorded."
    )

    class Meta:
        db_table = "acta"
        verbose_name = "actum"
        verbose_name_plural = "acta"
        ordering = ["seq"]
        indexes = [
            models.Index(fields=["chronicum", "seq"], name="acta_chronicum_seq"),
            # Acta are named by ID in a window's "before" and a follower's "after".
            models.Index(fields=["chronicum", "id"], name="acta_chronicum_id"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["chronicum", "idempotency_key"],
                condition=models.Q(idempotency_key__isnull=False),
                name="acta_chronicum_idempotency_key",
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} by {self.actor}"
