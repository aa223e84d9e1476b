"""The tables of ``chronica.integrations.langgraph``.

A LangGraph thread is the chronicum of the same ID. Its checkpoints, the channel
values they point at, the pending writes of its tasks and the map from its messages
to the acta that hold them live here, each row with the thread's owner. No table
references ``chronica``/``acta`` with a foreign key: writers that know only the seed's
tables (the Go library among them) delete chronica with plain SQL, and the
``chronicum_deleted`` signal drops a deleted thread's rows.
"""

from django.db import models
from django.db.models import Q


class LangGraphCheckpoint(models.Model):
    """One checkpoint of a thread's namespace: the checkpoint as LangGraph's serializer
    writes it, without its channel values (those are :class:`LangGraphBlob` rows, one per
    channel version, written only when the version changes)."""

    owner_id = models.CharField("owner", max_length=255)
    thread_id = models.CharField("thread ID", max_length=255)
    checkpoint_ns = models.CharField("namespace", max_length=255, blank=True, default="")
    checkpoint_id = models.CharField("checkpoint ID", max_length=64)
    parent_checkpoint_id = models.CharField(  # noqa: DJ001
        "parent checkpoint ID", max_length=64, null=True, blank=True
    )
    # A child LangGraph writes on purpose beside another (time travel, update_state on a
    # past checkpoint: metadata source "fork" or "update"). Two other children of one
    # parent are two writers racing: the unique constraint below refuses the second.
    fork = models.BooleanField(default=False, db_default=False)
    run_id = models.CharField("run ID", max_length=255, null=True, blank=True)  # noqa: DJ001
    type = models.CharField(max_length=32)
    checkpoint = models.BinaryField()
    metadata = models.JSONField(default=dict)

    class Meta:
        db_table = "chronica_langgraph_checkpoints"
        verbose_name = "LangGraph checkpoint"
        ordering = ["thread_id", "checkpoint_ns", "-checkpoint_id"]
        indexes = [
            models.Index(fields=["owner_id", "thread_id"], name="lg_checkpoints_owner"),
            models.Index(fields=["run_id"], name="lg_checkpoints_run"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["thread_id", "checkpoint_ns", "checkpoint_id"],
                name="lg_checkpoints_id",
            ),
            models.UniqueConstraint(
                fields=["thread_id", "checkpoint_ns", "parent_checkpoint_id"],
                condition=Q(fork=False, parent_checkpoint_id__isnull=False),
                name="lg_checkpoints_one_child",
            ),
        ]

    def __str__(self) -> str:
        return self.checkpoint_id


class LangGraphBlob(models.Model):
    """One version of one channel's value. A list of messages is kept as references
    (``type`` ``"chronica-messages"``: runs of :class:`LangGraphMessage` rows), every
    other value as LangGraph's serializer writes it."""

    owner_id = models.CharField("owner", max_length=255)
    thread_id = models.CharField("thread ID", max_length=255)
    checkpoint_ns = models.CharField("namespace", max_length=255, blank=True, default="")
    channel = models.CharField(max_length=255)
    version = models.CharField(max_length=64)
    type = models.CharField(max_length=32)
    blob = models.BinaryField(null=True)

    class Meta:
        db_table = "chronica_langgraph_blobs"
        verbose_name = "LangGraph channel value"
        indexes = [models.Index(fields=["owner_id"], name="lg_blobs_owner")]
        constraints = [
            models.UniqueConstraint(
                fields=["thread_id", "checkpoint_ns", "channel", "version"],
                name="lg_blobs_version",
            )
        ]

    def __str__(self) -> str:
        return f"{self.channel}@{self.version}"


class LangGraphWrite(models.Model):
    """A pending write of a task on a checkpoint."""

    owner_id = models.CharField("owner", max_length=255)
    thread_id = models.CharField("thread ID", max_length=255)
    checkpoint_ns = models.CharField("namespace", max_length=255, blank=True, default="")
    checkpoint_id = models.CharField("checkpoint ID", max_length=64)
    task_id = models.CharField("task ID", max_length=255)
    task_path = models.CharField("task path", max_length=1024, blank=True, default="")
    idx = models.IntegerField()
    channel = models.CharField(max_length=255)
    type = models.CharField(max_length=32)
    blob = models.BinaryField()

    class Meta:
        db_table = "chronica_langgraph_writes"
        verbose_name = "LangGraph pending write"
        indexes = [models.Index(fields=["owner_id"], name="lg_writes_owner")]
        constraints = [
            models.UniqueConstraint(
                fields=["thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx"],
                name="lg_writes_key",
            )
        ]

    def __str__(self) -> str:
        return f"{self.task_id}/{self.idx}"


class LangGraphMessage(models.Model):
    """One message of a thread, recorded once: the acta that hold it (in the
        chronicum of the thread) and the message as LangGraph's serializer writes it, so
        that a checkpoint is read back exactly. ``seq`` orders a thread's messages as they
        were first seen, ``position`` numbers them within the thread; a channel value refers
    to runs of positions."""

    seq = models.BigAutoField(primary_key=True)
    owner_id = models.CharField("owner", max_length=255)
    thread_id = models.CharField("thread ID", max_length=255)
    # 1, 2, 3... in the thread: a channel value is runs of positions.
    position = models.BigIntegerField()
    message_id = models.CharField("message ID", max_length=255)
    # The message's serialized bytes' SHA-256: a message LangGraph replaced under the
    # same ID (add_messages) is a new row, and new acta.
    digest = models.CharField(max_length=64)
    actum_ids = models.JSONField("acta", default=list)
    type = models.CharField(max_length=32)
    blob = models.BinaryField()

    class Meta:
        db_table = "chronica_langgraph_messages"
        verbose_name = "LangGraph message"
        ordering = ["seq"]
        indexes = [models.Index(fields=["owner_id"], name="lg_messages_owner")]
        constraints = [
            models.UniqueConstraint(
                fields=["thread_id", "message_id", "digest"], name="lg_messages_digest"
            ),
            models.UniqueConstraint(fields=["thread_id", "position"], name="lg_messages_position"),
        ]

    def __str__(self) -> str:
        return self.message_id


class LangGraphItem(models.Model):
    """One item of an owner's long-term memory (``ChronicaStore``): a JSON value under
    a namespace (its labels joined with ``.``, as LangGraph forbids ``.`` in a label)
    and a key, with an optional time to live."""

    owner_id = models.CharField("owner", max_length=255)
    namespace = models.CharField(max_length=1024)
    key = models.CharField(max_length=255)
    value = models.JSONField()
    created_at = models.DateTimeField("created")
    updated_at = models.DateTimeField("updated")
    expires_at = models.DateTimeField("expires", null=True, blank=True)
    ttl_minutes = models.FloatField("TTL (minutes)", null=True, blank=True)

    class Meta:
        db_table = "chronica_langgraph_items"
        verbose_name = "LangGraph memory item"
        ordering = ["owner_id", "namespace", "key"]
        indexes = [models.Index(fields=["expires_at"], name="lg_items_expires")]
        constraints = [
            models.UniqueConstraint(fields=["owner_id", "namespace", "key"], name="lg_items_key")
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.key}"
