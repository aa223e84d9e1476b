"""The tables of ``chronica.integrations.pydantic_ai``.

PydanticAI keeps a conversation as a tree of entries (one message each, pointing at
the one before) plus a record (head, revision, branches, usage). The messages are acta
of the chronicum named like the conversation; these two tables hold the rest. Neither
references ``chronica``/``acta`` with a foreign key: writers that know only the seed's
tables (the Go library among them) delete chronica with plain SQL. The tables kept
their names when they moved here from the ``chronica`` app.
"""

from django.db import models


class PydanticAIConversation(models.Model):
    """A PydanticAI conversation's record, beside the chronicum that holds its messages."""

    conversation_id = models.CharField("conversation ID", primary_key=True, max_length=255)
    # The chronicum's owner: the record's scope, or the store's owner for unscoped ones.
    owner_id = models.CharField("owner", max_length=255)
    # NULL, not "": PydanticAI tells "no scope" from any scope.
    scope = models.CharField(max_length=255, null=True, blank=True)  # noqa: DJ001
    revision = models.CharField(max_length=255)
    updated_at = models.DateTimeField("updated")
    # The whole ConversationRecord as PydanticAI serialises it; the columns above are
    # the parts that are filtered, compared or sorted on.
    record = models.JSONField()

    class Meta:
        db_table = "chronica_pydantic_ai_conversations"
        verbose_name = "PydanticAI conversation"
        ordering = ["-updated_at"]
        indexes = [
            models.Index(fields=["-updated_at"], name="pai_conversations_updated"),
            models.Index(fields=["scope", "-updated_at"], name="pai_conversations_scope"),
        ]

    def __str__(self) -> str:
        return self.conversation_id


class PydanticAIEntry(models.Model):
    """One entry of a PydanticAI conversation: which actum holds its message, and the
    entry before it. ``seq`` is the order the acta were written in."""

    seq = models.BigAutoField(primary_key=True)
    conversation = models.ForeignKey(
        PydanticAIConversation,
        on_delete=models.CASCADE,
        related_name="entries",
        db_column="conversation_id",
        db_index=False,  # covered by the (conversation_id, seq) index
    )
    entry_id = models.CharField("entry ID", max_length=255)
    parent_id = models.CharField("parent entry ID", max_length=255, null=True, blank=True)  # noqa: DJ001
    actum_id = models.CharField("actum ID", max_length=255)

    class Meta:
        db_table = "chronica_pydantic_ai_entries"
        verbose_name = "PydanticAI conversation entry"
        verbose_name_plural = "PydanticAI conversation entries"
        ordering = ["seq"]
        indexes = [
            models.Index(fields=["conversation", "seq"], name="pai_entries_conversation_seq"),
            models.Index(fields=["entry_id"], name="pai_entries_entry_id"),
        ]
        constraints = [
            # A fork copies the history it keeps, entry IDs and all, into its own
            # chronicum: an ID is unique within one conversation, not across them.
            models.UniqueConstraint(
                fields=["conversation", "entry_id"], name="pai_entries_conversation_entry"
            )
        ]

    def __str__(self) -> str:
        return self.entry_id
