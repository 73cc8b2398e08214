from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import CASCADE, SET_NULL
from django.db.models.deletion import Collector
from django.db.models.functions import Lower

from legacymind.validators import no_nul
from legacymind.vectors.search import EmbeddedModel, embedding_indexes


def private_source_deleted(
    collector: Collector, field: models.ForeignKey, sub_objs: Any, using: str
) -> None:
    """``on_delete`` of the thought a memory or candidate was drawn from.

    From a private thought, the rows go with it (a thought deleted by itself, or with its
    owner): what was drawn from it is its owner's alone, and with no source thought left a
    memory would read as shared, visible to everyone (``memories_visible_to``), and a
    candidate would no longer say it came from private words. From a shared thought they stay,
    without the link."""
    thoughts = field.remote_field.model._base_manager.using(using)
    private = thoughts.filter(is_private=True).values("pk")
    hidden: Any
    shared: Any
    if isinstance(sub_objs, models.QuerySet):
        hidden, shared = (
            sub_objs.filter(**{f"{field.name}__in": private}),
            sub_objs.exclude(**{f"{field.name}__in": private}),
        )
    else:
        ids = {getattr(obj, field.attname) for obj in sub_objs}
        private_ids = set(thoughts.filter(pk__in=ids, is_private=True).values_list("pk", flat=True))
        hidden = [obj for obj in sub_objs if getattr(obj, field.attname) in private_ids]
        shared = [obj for obj in sub_objs if getattr(obj, field.attname) not in private_ids]
    if hidden:
        CASCADE(collector, field, hidden, using)
    if shared:
        SET_NULL(collector, field, shared, using)


class Memory(EmbeddedModel):
    """What entities and observations share: they are the memories injected into thoughts."""

    significance = models.FloatField(default=0.5)
    access_count = models.PositiveIntegerField(default=0)
    last_accessed = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class Entity(Memory):
    reembed_label, reembed_target, reembed_columns = "kg_entities", "kg", ("name", "entity_type")

    name = models.CharField(max_length=255)
    entity_type = models.CharField(max_length=64, default="concept")
    description = models.TextField(blank=True, default="")
    data = models.JSONField(default=dict, blank=True, validators=[no_nul])
    aliases = ArrayField(models.CharField(max_length=255), default=list, blank=True)
    source_thought = models.ForeignKey(
        "thoughts.Thought",
        null=True,
        blank=True,
        on_delete=private_source_deleted,
        related_name="kg_entities",
    )

    class Meta:
        verbose_name_plural = "entities"
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                Lower("name"),
                Lower("entity_type"),
                name="kg_entity_name_type_ci_uniq",
                # What a form (the admin's) says; the API answers its own bare 409.
                violation_error_message=(
                    "This name is already in use for this type (names are unique per type, "
                    "ignoring case): choose another name or type."
                ),
            )
        ]
        indexes = [
            models.Index(fields=["name", "entity_type"], name="kg_entity_name_type_idx"),
            *embedding_indexes("kg_entity"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.entity_type})"

    def embedding_text(self) -> str:
        return self.text_of(self.name, self.entity_type)

    @staticmethod
    def text_of(name: str, entity_type: str) -> str:
        """What an entity embeds as, from its columns (searches read columns, not rows)."""
        return f"{name} ({entity_type})"

    @staticmethod
    def reembed_text(*values: Any) -> str:
        return Entity.text_of(*values)


class Observation(Memory):
    reembed_label, reembed_target = "kg_observations", "kg"
    reembed_columns = ("name", "description")

    name = models.CharField(max_length=255)
    description = models.TextField(blank=True, default="")
    data = models.JSONField(default=dict, blank=True, validators=[no_nul])
    entity = models.ForeignKey(
        Entity, null=True, blank=True, on_delete=models.CASCADE, related_name="observations"
    )
    source_thought = models.ForeignKey(
        "thoughts.Thought",
        null=True,
        blank=True,
        on_delete=private_source_deleted,
        related_name="kg_observations",
    )
    confidence = models.FloatField(default=1.0)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["name", "source_thought"],
                name="kg_observation_name_thought_uniq",
                nulls_distinct=False,
            )
        ]
        indexes = embedding_indexes("kg_obs")

    def __str__(self) -> str:
        return self.name

    def embedding_text(self) -> str:
        return self.text_of(self.name, self.description)

    @staticmethod
    def text_of(name: str, description: str) -> str:
        """What an observation embeds as, from its columns."""
        return f"{name} - {description}" if description else name

    @staticmethod
    def reembed_text(*values: Any) -> str:
        return Observation.text_of(*values)


class Edge(models.Model):
    source = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="edges_out")
    target = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="edges_in")
    rel_type = models.CharField(max_length=64)
    data = models.JSONField(default=dict, blank=True, validators=[no_nul])
    confidence = models.FloatField(default=1.0)
    source_thought = models.ForeignKey(
        "thoughts.Thought",
        null=True,
        blank=True,
        on_delete=private_source_deleted,
        related_name="kg_edges",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "target", "rel_type"], name="kg_edge_triple_uniq"
            )
        ]

    def __str__(self) -> str:
        return f"{self.source.name} -[{self.rel_type}]-> {self.target.name}"

    def clean(self) -> None:
        # The API refuses a self-edge; the admin's form validates through here.
        if self.source_id is not None and self.source_id == self.target_id:
            raise ValidationError(
                {"target": "An edge joins two different entities: source and target are the same."}
            )


class CandidateStatus(models.TextChoices):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    ALIASED = "aliased"
    AUTO_APPROVED = "auto_approved"


class Candidate(models.Model):
    """A staged extraction result waiting for a moderator, with where it came from."""

    status = models.CharField(
        max_length=16, choices=CandidateStatus.choices, default=CandidateStatus.PENDING
    )
    confidence = models.FloatField(default=0.5)
    origin = models.CharField(max_length=32, default="extraction")
    staged_by_thought = models.ForeignKey(
        "thoughts.Thought",
        null=True,
        blank=True,
        on_delete=private_source_deleted,
        related_name="+",
    )
    provider = models.CharField(max_length=32, blank=True, default="")
    model = models.CharField(max_length=128, blank=True, default="")
    prompt_hash = models.CharField(max_length=64, blank=True, default="")
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    review_note = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True


class EntityCandidate(Candidate):
    name = models.CharField(max_length=255)
    entity_type = models.CharField(max_length=64, default="concept")
    description = models.TextField(blank=True, default="")
    aliases = ArrayField(models.CharField(max_length=255), default=list, blank=True)
    data = models.JSONField(default=dict, blank=True, validators=[no_nul])
    promoted = models.ForeignKey(
        Entity, null=True, blank=True, on_delete=models.SET_NULL, related_name="candidates"
    )

    class Meta:
        ordering = ["-created_at"]
        permissions = [("moderate", "Can moderate knowledge-graph candidates")]
        indexes = [
            models.Index(fields=["status", "created_at"], name="kg_ecand_status_idx"),
            models.Index(fields=["confidence"], name="kg_ecand_conf_idx"),
            models.Index(fields=["name", "entity_type", "status"], name="kg_ecand_ident_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.entity_type}) [{self.status}]"


class EdgeCandidate(Candidate):
    source_name = models.CharField(max_length=255)
    target_name = models.CharField(max_length=255)
    rel_type = models.CharField(max_length=64)
    # The sentence that states the relation, verbatim, so a moderator decides in one glance.
    evidence = models.TextField(blank=True, default="", validators=[no_nul])
    data = models.JSONField(default=dict, blank=True, validators=[no_nul])
    promoted = models.ForeignKey(
        Edge, null=True, blank=True, on_delete=models.SET_NULL, related_name="candidates"
    )

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["status", "created_at"], name="kg_gcand_status_idx"),
            models.Index(fields=["confidence"], name="kg_gcand_conf_idx"),
            models.Index(
                fields=["source_name", "target_name", "rel_type", "status"],
                name="kg_gcand_ident_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source_name} -[{self.rel_type}]-> {self.target_name} [{self.status}]"


class ObservationCandidate(Candidate):
    """An observation a non-moderator wrote (through MCP), waiting for a moderator. It names
    its entity by ``entity_name`` (blank: an observation of no entity); ``entity`` is that
    entity when it already existed, else it is resolved by name on approval, so an observation
    of an entity staged in the same breath waits for that entity's approval."""

    name = models.CharField(max_length=255)
    description = models.TextField(blank=True, default="")
    data = models.JSONField(default=dict, blank=True, validators=[no_nul])
    entity_name = models.CharField(max_length=255, blank=True, default="")
    entity = models.ForeignKey(
        Entity, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    promoted = models.ForeignKey(
        Observation, null=True, blank=True, on_delete=models.SET_NULL, related_name="candidates"
    )

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["status", "created_at"], name="kg_ocand_status_idx"),
            models.Index(fields=["confidence"], name="kg_ocand_conf_idx"),
            models.Index(fields=["name", "entity_name", "status"], name="kg_ocand_ident_idx"),
        ]

    def __str__(self) -> str:
        about = f"{self.entity_name}: " if self.entity_name else ""
        return f"{about}{self.description or self.name} [{self.status}]"


class Blocklist(models.Model):
    """Normalised identities moderators rejected: never proposed again. An entity is its name,
    an edge its relation (``edge_key``), an observation its name and entity's
    (``observation_key``)."""

    class Kind(models.TextChoices):
        ENTITY = "entity"
        EDGE = "edge"
        OBSERVATION = "observation"

    item = models.CharField(max_length=600)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.ENTITY)
    reason = models.TextField(blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "blocklist"
        constraints = [models.UniqueConstraint(fields=["kind", "item"], name="kg_blocklist_uniq")]

    def __str__(self) -> str:
        return f"{self.kind}: {self.item}"


class ThoughtExtraction(models.Model):
    """That the extractor chain has run over a thought and its results were staged. Kept apart
    from the candidates because an extraction that finds nothing new (or only identities already
    pending or in the graph) stages nothing, and must not be run again by every ``kg_extract``."""

    thought = models.OneToOneField(
        "thoughts.Thought",
        primary_key=True,
        on_delete=models.CASCADE,
        related_name="kg_extraction",
    )
    extracted_at = models.DateTimeField()
    provider = models.CharField(max_length=32, blank=True, default="")

    def __str__(self) -> str:
        return f"{self.thought_id} extracted {self.extracted_at:%Y-%m-%d %H:%M} ({self.provider})"
