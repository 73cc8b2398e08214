from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class DialogueThread(models.Model):
    """A stateful inner-voice dialogue (spec 001). The user's questions are never stored."""

    class Status(models.TextChoices):
        OPEN = "open"
        CLOSED = "closed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="dialogue_threads"
    )
    topic = models.CharField(max_length=255, blank=True, default="")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    summary = models.TextField(blank=True, default="")
    started_at = models.DateTimeField(auto_now_add=True)
    last_interaction = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    close_reason = models.CharField(max_length=32, blank=True, default="")

    class Meta:
        ordering = ["-last_interaction"]
        indexes = [
            models.Index(fields=["owner", "status", "last_interaction"], name="iv_thread_idx")
        ]

    def __str__(self) -> str:
        return self.topic or str(self.id)


class DialogueExchange(models.Model):
    """One exchange: the synthesis thought and the follow-up (feedback) thought it produced."""

    thread = models.ForeignKey(DialogueThread, on_delete=models.CASCADE, related_name="exchanges")
    position = models.PositiveIntegerField()
    synthesis_thought = models.ForeignKey(
        "thoughts.Thought", on_delete=models.CASCADE, related_name="+"
    )
    feedback_thought = models.ForeignKey(
        "thoughts.Thought", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    thoughts_provided = models.JSONField(default=list, blank=True)
    memories_injected = models.JSONField(default=list, blank=True)
    significance = models.FloatField(default=0.5)
    summarized = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["thread", "position"]
        constraints = [
            models.UniqueConstraint(fields=["thread", "position"], name="iv_exchange_pos_uniq")
        ]

    def __str__(self) -> str:
        return f"{self.thread_id}#{self.position}"
