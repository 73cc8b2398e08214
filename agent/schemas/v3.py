"""The v3 agent's contracts (spec 004 §3): the belief graph, the actions, the signed state,
the result and the safety notice."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from uuid import UUID, uuid4

from pydantic import ConfigDict, Field

from .base import (
    MAX_NODES,
    CrisisResource,
    ExitReason,
    JournalEntry,
    SafetyNotice,
    Text400,
    _Model,
)


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
