from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models

from legacymind.vectors.search import EmbeddedModel, embedding_indexes


class Thought(EmbeddedModel):
    """One stored thought: the original SurrealDB ``thoughts`` table, field for field.

    The three continuity links are foreign keys without a database constraint: the original
    accepted a link to a thought that does not exist yet (a "string" link), which later resolves
    when that thought is written with the same id.
    """

    class Origin(models.TextChoices):
        HUMAN = "human"
        TOOL = "tool"
        INNER_VOICE = "inner_voice"
        INNER_VOICE_FEEDBACK = "inner_voice.feedback"
        JOURNAL = "journal"

    reembed_label, reembed_target, reembed_columns = "thoughts", "thoughts", ("content",)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="thoughts",
        db_index=False,  # thought_owner_idx (owner, created_at) serves every owner lookup
    )
    content = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    mode = models.CharField(max_length=32, null=True, blank=True)
    status = models.CharField(max_length=32, default="active")
    injected_memories = models.JSONField(default=list, blank=True)
    enriched_content = models.TextField(null=True, blank=True)
    injection_scale = models.PositiveSmallIntegerField(default=0)
    significance = models.FloatField(default=0.5)
    access_count = models.PositiveIntegerField(default=0)
    last_accessed = models.DateTimeField(null=True, blank=True)
    submode = models.CharField(max_length=32, null=True, blank=True)
    framework_enhanced = models.BooleanField(null=True, blank=True)
    framework_analysis = models.JSONField(null=True, blank=True)
    origin = models.CharField(max_length=32, choices=Origin.choices, null=True, blank=True)
    tags = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    is_private = models.BooleanField(default=False)
    session_id = models.CharField(max_length=128, null=True, blank=True)
    chain_id = models.CharField(max_length=128, null=True, blank=True)
    previous_thought = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="next_thoughts",
    )
    revises_thought = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="revisions",
    )
    branch_from = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="branches",
    )
    confidence = models.FloatField(null=True, blank=True)
    verification = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["session_id", "created_at"], name="thought_session_idx"),
            models.Index(fields=["chain_id", "created_at"], name="thought_chain_idx"),
            models.Index(fields=["owner", "created_at"], name="thought_owner_idx"),
            *embedding_indexes("thought"),
        ]

    def __str__(self) -> str:
        # Shown by the admin wherever a thought is named; a private one keeps its words.
        return "(private thought)" if self.is_private else self.content[:60]
