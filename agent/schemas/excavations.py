"""The v2 excavations' contracts (specs/README.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID, uuid4

from pydantic import AfterValidator, Field

from .base import (
    MAX_REPLY,
    NOT_BLANK,
    JournalEntry,
    SafetyNotice,
    Text400,
    _Model,
    _not_blank,
)


# --- v2 excavations -----------------------------------------------------------------------------
class CruxHypothesis(_Model):
    hypothesis_id: UUID = Field(default_factory=uuid4)
    text: Text400
    confidence: float = Field(ge=0.0, le=1.0)
    confirmations: int = Field(default=0, ge=0)
    status: Literal["active", "confirmed", "discarded"] = "active"
    discard_reason: str | None = None
    archetype: str = "open"


class Probe(_Model):
    probe_id: UUID = Field(default_factory=uuid4)
    question: str = Field(min_length=1, max_length=200)
    targets: list[UUID] = Field(min_length=1)
    created_at: datetime
    quick_options: list[str] | None = None


class ProbeTurn(_Model):
    probe: Probe
    user_reply: str
    analysis: str
    signals: list[str] = []
    updated_hypotheses: list[CruxHypothesis] = []


class ExcavationState(_Model):
    state_id: UUID = Field(default_factory=uuid4)
    revision: int = Field(default=0, ge=0)
    integrity: str | None = None
    journal_entry: JournalEntry
    hypotheses: list[CruxHypothesis] = Field(default_factory=list, max_length=4)
    probes_log: list[ProbeTurn] = []
    last_probe: Probe | None = None
    budget_used: int = Field(default=0, ge=0)
    exit_flags: dict[str, bool] = {}


class ExcavationSummary(_Model):
    exit_reason: Literal["threshold", "confirmations", "budget"]
    reasoning_trail: str
    discarded_log: list[str] = []


class ExcavationResult(_Model):
    confirmed_crux: CruxHypothesis
    secondary_themes: list[CruxHypothesis] = []
    excavation_summary: ExcavationSummary


Reply = Annotated[
    str,
    Field(min_length=1, max_length=MAX_REPLY, json_schema_extra=NOT_BLANK),
    AfterValidator(_not_blank),
]


class ExcavationRequest(_Model):
    mode: Literal["init", "step"]
    journal_entry: JournalEntry | None = None
    state: ExcavationState | None = None
    user_reply: Reply | None = None
    expected_probe_id: UUID | None = None


class ExcavationInit(_Model):
    """``mode=init``: what ExcavationRequest takes when the view starts an excavation (the
    step's fields are read only for mode=step)."""

    mode: Literal["init"]
    journal_entry: JournalEntry
    state: ExcavationState | None = None
    user_reply: Reply | None = None
    expected_probe_id: UUID | None = None


class ExcavationStep(_Model):
    """``mode=step``: the signed state, the reply and the id of the probe it answers."""

    mode: Literal["step"]
    journal_entry: JournalEntry | None = None
    state: ExcavationState
    user_reply: Reply
    expected_probe_id: UUID


# The v2 body as the schema documents it: one shape per mode. The view validates with
# ExcavationRequest and names a field a mode needs in its own words; both accept the same bodies.
ExcavationBody = Annotated[ExcavationInit | ExcavationStep, Field(discriminator="mode")]


class ExcavationResponse(_Model):
    complete: bool
    state: ExcavationState
    probe: Probe | None = None
    result: ExcavationResult | None = None
    safety: SafetyNotice = Field(default_factory=SafetyNotice)


class V2ReflectionRequest(_Model):
    state: ExcavationState
    result: ExcavationResult | None = None
