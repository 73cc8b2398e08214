"""Pydantic contracts of the journaling API (spec 004 §3 and the v1/v2 contracts in
specs/README.md): the engine's and the services' types. The API's inputs and outputs
(agent.api) carry them in a ContractField, which validates and renders them and documents
their JSON Schema."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID, uuid4

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

from legacymind.api.patterns import HAS_TEXT

Text400 = Annotated[str, Field(min_length=1, max_length=400)]
MAX_ENTRY = 20000
# An answer to one question: a tenth of an entry. The same cap for v2 replies and v3 answers,
# which answer the same probe (see the v2 ↔ v3 adapter).
MAX_REPLY = 2000
MAX_NODES = 12  # active (≤ MAX_HYPOTHESES) plus merged and retired ones kept for the trail
ExitReason = Literal["threshold", "epsilon", "budget", "guardrail"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _not_blank(value: str) -> str:
    # Checked, not stripped: the text is kept as written (it is signed and quoted back).
    if not value.strip():
        raise PydanticCustomError("blank", "This field may not be blank.")
    return value


# The schema's word for _not_blank: some character that is not white space (a JSON Schema
# pattern is a search, not a full match).
NOT_BLANK = {"pattern": HAS_TEXT}


class JournalEntry(_Model):
    text: Annotated[
        str,
        Field(min_length=1, max_length=MAX_ENTRY, json_schema_extra=NOT_BLANK),
        AfterValidator(_not_blank),
    ]


# --- v3 belief graph --------------------------------------------------------------------------
class ProposedCrux(_Model):
    """A hypothesis in the chat model's words, checked at the first turn (agent/engine/
    proposals.py): what the writer reads as its option and, confirmed, as the crux."""

    text: Text400
    # The sentences of the entry it rests on, verbatim.
    evidence_spans: list[Annotated[str, Field(min_length=1, max_length=1000)]] = Field(
        min_length=1, max_length=3
    )


class CruxNode(_Model):
    node_id: UUID = Field(default_factory=uuid4)
    text: Text400
    priors: float | None = Field(default=None, ge=0.0, le=1.0)
    supports: list[str] = []
    counters: list[str] = []
    status: Literal["active", "merged", "retired"] = "active"
    # Which question-bank archetype the node speaks for ("open" for nodes spawned from answers).
    archetype: str = "open"
    origin: Literal["seed", "spawn", "answer"] = "seed"
    merged_into: UUID | None = None
    # The chat model's wording of a seed, when one was configured and its proposal passed the
    # checks; ``text`` stays the archetype's statement, which the answer model reads.
    proposal: ProposedCrux | None = None


class BeliefState(_Model):
    # Merged and retired nodes stay for the trail, so the cap is on active ones (MAX_HYPOTHESES)
    # plus room for history.
    nodes: list[CruxNode] = Field(default_factory=list, max_length=MAX_NODES)
    probs: dict[UUID, float] = Field(default_factory=dict)
    top_ids: list[UUID] = []


class Evidence(_Model):
    kind: Literal[
        "UserAnswer", "EntryQuote", "PatternSignal", "ContextDatum", "MicroExperimentResult"
    ]
    payload: dict[str, Any]
    at_revision: int


# --- actions ------------------------------------------------------------------------------------
def _tag_required(schema: dict[str, Any]) -> None:
    # In the Action union pydantic needs ``type`` to pick the model, default or not: the schema
    # says so, or a body without it would be schema-valid and refused.
    required = schema.setdefault("required", [])
    if "type" not in required:
        required.insert(0, "type")


class _Action(_Model):
    model_config = ConfigDict(extra="forbid", json_schema_extra=_tag_required)


class AskUserAction(_Action):
    type: Literal["AskUser"] = "AskUser"
    action_id: UUID = Field(default_factory=uuid4)
    question: str = Field(min_length=1, max_length=200)
    quick_options: list[str] | None = Field(default=None, min_length=2, max_length=4)
    targets: list[UUID] = []
    rationale: str | None = None


class HypothesizeAction(_Action):
    type: Literal["Hypothesize"] = "Hypothesize"
    action_id: UUID = Field(default_factory=uuid4)
    spawn_k: int = Field(default=1, ge=1, le=3)


class ClusterThemesAction(_Action):
    type: Literal["ClusterThemes"] = "ClusterThemes"
    action_id: UUID = Field(default_factory=uuid4)
    method: Literal["HDBSCAN", "spectral"] = "HDBSCAN"


class CounterfactualTestAction(_Action):
    type: Literal["CounterfactualTest"] = "CounterfactualTest"
    action_id: UUID = Field(default_factory=uuid4)
    test_spec: dict[str, Any]


class EvidenceRequestAction(_Action):
    type: Literal["EvidenceRequest"] = "EvidenceRequest"
    action_id: UUID = Field(default_factory=uuid4)
    kind: Literal["timeline", "constraints", "goals", "norms"]


class SilenceCheckAction(_Action):
    type: Literal["SilenceCheck"] = "SilenceCheck"
    action_id: UUID = Field(default_factory=uuid4)


class ConfidenceUpdateAction(_Action):
    type: Literal["ConfidenceUpdate"] = "ConfidenceUpdate"
    action_id: UUID = Field(default_factory=uuid4)


class StopAction(_Action):
    type: Literal["Stop"] = "Stop"
    action_id: UUID = Field(default_factory=uuid4)
    exit_reason: ExitReason


Action = Annotated[
    AskUserAction
    | HypothesizeAction
    | ClusterThemesAction
    | CounterfactualTestAction
    | EvidenceRequestAction
    | SilenceCheckAction
    | ConfidenceUpdateAction
    | StopAction,
    Field(discriminator="type"),
]


class AgentState(_Model):
    state_id: UUID = Field(default_factory=uuid4)
    revision: int = Field(default=0, ge=0)
    integrity: str | None = None
    journal_entry: JournalEntry
    belief_state: BeliefState
    evidence_log: list[Evidence] = []
    last_action: Action | None = None
    budget_used: int = Field(default=0, ge=0)
    exit_flags: dict[str, bool] = {}
    # The warning-sign category of a concern the distress detector found (never the words).
    safety_category: str | None = Field(default=None, max_length=40)


class ConfirmedCrux(_Model):
    node_id: UUID
    text: str
    confidence: float
    # The sentences (or clauses) of the entry the crux rests on, verbatim.
    evidence_spans: list[str] = []


class SecondaryTheme(_Model):
    node_id: UUID
    text: str
    confidence: float | None = None
    # The sentences (or clauses) of the entry the theme rests on, verbatim.
    evidence_spans: list[str] = []


class CrisisResource(_Model):
    name: str
    contact: str
    region: str


SafetyLevel = Literal["none", "concern", "risk"]


class SafetyNotice(_Model):
    """What the distress detector found in what the writer wrote: the level and the
    warning-sign category, never the words. ``concern``: show the message and resources
    calmly, then let the writer go on; ``risk``: the loop stopped (exit_reason guardrail)."""

    level: SafetyLevel = "none"
    category: str | None = None
    message: str | None = None
    crisis_resources: list[CrisisResource] = []


class AgentResult(_Model):
    # None only on a guardrail exit, where naming a crux would be the wrong thing to do.
    confirmed_crux: ConfirmedCrux | None
    secondary_themes: list[SecondaryTheme] = []
    reasoning_trail: str
    exit_reason: ExitReason
    # Filled only on a guardrail exit: what the client shows instead of a crux.
    crisis_resources: list[CrisisResource] = []
    message: str | None = None


class AgentActInitRequest(_Model):
    mode: Literal["init"]
    journal_entry: JournalEntry


class AgentActStepRequest(_Model):
    mode: Literal["continue"]
    state: AgentState
    user_event: dict[str, Any] | None = None


AgentActRequest = Annotated[AgentActInitRequest | AgentActStepRequest, Field(discriminator="mode")]


class AgentActResponse(_Model):
    complete: bool
    state: AgentState
    action: Action | None = None
    result: AgentResult | None = None
    safety: SafetyNotice = Field(default_factory=SafetyNotice)


# --- v1 reflections -----------------------------------------------------------------------------
Framework = Literal["buddhism", "stoicism", "existentialism", "neoadlerianism", "other"]


class Perspective(_Model):
    framework: Framework
    other_framework_name: str | None = None
    core_principle_invoked: str
    challenge_framing: str
    practical_experiment: str
    potential_trap: str
    key_metaphor: str


class Perspectives(_Model):
    items: list[Perspective]


class AgreementItem(_Model):
    framework_a: Framework
    framework_b: Framework
    stance: Literal["agree", "diverge", "nuanced"]
    notes: str


class TensionItem(_Model):
    frameworks: list[Framework] = Field(min_length=2)
    explanation: str


class Prophecy(_Model):
    agreement_scorecard: list[AgreementItem]
    tension_summary: list[TensionItem]
    synthesis: str
    what_is_lost_by_blending: list[str]


class Reflection(_Model):
    journal_entry: JournalEntry
    perspectives: Perspectives
    prophecy: Prophecy
    # Who wrote it: "cli" / "grok" (chat chain) or "offline-composer" (deterministic fallback).
    provider: str = "offline-composer"
    safety: SafetyNotice = Field(default_factory=SafetyNotice)


class ReflectionRequest(_Model):
    journal_entry: JournalEntry


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
