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
    # Added after the first release, NULL for a writer that knows only the columns above:
    # the chronicum's state (BaseStore.supports_state) and the namespace it is in.
    namespace = models.CharField(max_length=255, null=True, blank=True)  # noqa: DJ001
    state = models.JSONField(null=True, blank=True)

    class Meta:
        db_table = "chronica"
        verbose_name = "chronicum"
        verbose_name_plural = "chronica"
        ordering = ["-last_activity_at"]
        indexes = [
            # An owner's chronica, latest activity first, ties by ID: one index range per page.
            models.Index(
                fields=["owner_id", "-last_activity_at", "id"], name="chronica_owner_activity"
            ),
            # A namespace's chronica (of one owner or of all), oldest activity first.
            models.Index(
                fields=["namespace", "owner_id", "last_activity_at"], name="chronica_namespace"
            ),
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
    # Added by migration 0006, NULL for a writer that knows only the columns above:
    # who wrote the actum ("owner", or "credential:<key ID>" for an agent credential);
    # NULL when the actor was not attested. No foreign key: a revoked or deleted
    # credential leaves its acta's provenance as it was.
    recorded_by = models.CharField(  # noqa: DJ001
        "recorded by", max_length=255, null=True, blank=True
    )
    # Added by migration 0011, NULL for a writer that knows only the columns above: on
    # each actum of a compaction, the ID of the actum it compacts through.
    compacts = models.CharField(  # noqa: DJ001
        "compacts through", max_length=255, null=True, blank=True
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
            # A chronicum's compactions, newest first: the compacted window finds the
            # newest one in a probe, however long the session.
            models.Index(
                fields=["chronicum", "seq"],
                condition=models.Q(compacts__isnull=False),
                name="acta_compactions",
            ),
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


class SharedState(models.Model):
    """A state document shared by several chronica: an owner's state in a namespace
    (``owner_id`` set), or the namespace's own (``owner_id`` empty), shared by every
    owner who writes into that namespace (BaseStore.supports_state)."""

    namespace = models.CharField(max_length=255)
    owner_id = models.CharField("owner", max_length=255, blank=True)
    value = models.JSONField(default=dict)
    updated_at = models.DateTimeField("updated")

    class Meta:
        db_table = "chronica_states"
        verbose_name = "shared state"
        constraints = [
            models.UniqueConstraint(fields=["namespace", "owner_id"], name="chronica_states_key")
        ]

    def __str__(self) -> str:
        return f"{self.namespace} / {self.owner_id or '(namespace)'}"


class AgentCredential(models.Model):
    """A credential an owner issues to one agent (``actor``): whoever presents its secret
    writes as that actor only, with the actor kinds listed, into the owner's chronica
    (only the ones listed, when ``chronica`` lists any). The secret is stored only as
    a hash (``chronica.services.credentials``)."""

    key_id = models.CharField("key ID", primary_key=True, max_length=32)
    secret_hash = models.CharField("secret hash", max_length=128)
    owner_id = models.CharField("owner", max_length=255, db_index=True)
    actor = models.CharField(max_length=255)
    actor_kinds = models.JSONField("actor kinds", default=list)
    chronica = models.JSONField(
        null=True, blank=True, help_text="The chronicum IDs it may use; empty: all the owner's."
    )
    may_list = models.BooleanField("may list", default=False)
    may_delete = models.BooleanField("may delete", default=False)
    may_pop = models.BooleanField("may pop", default=False)
    created_at = models.DateTimeField("created")
    expires_at = models.DateTimeField("expires", null=True, blank=True)
    revoked_at = models.DateTimeField("revoked", null=True, blank=True)
    last_used_at = models.DateTimeField("last used", null=True, blank=True)

    class Meta:
        db_table = "chronica_agent_credentials"
        verbose_name = "agent credential"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.actor} ({self.key_id})"
