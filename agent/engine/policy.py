"""enumerate_actions / score_actions / execute (spec 004 §5.2-5.4)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.engine import observations as obs
from agent.engine.answers import answer_table, latent_statements, pick_table, statement
from agent.engine.archetypes import THEMES
from agent.engine.beliefs import OTHER, Beliefs, active_nodes, near_duplicates
from agent.engine.config import EngineConfig
from agent.engine.executors import (
    cluster_themes,
    observe_internal,
    option_text,
    retire_nodes,
    spawn_candidates,
    spawn_nodes,
    spectral_sides,
)
from agent.engine.infotheory import entropy, expected_information_gain, normalise
from agent.engine.proposals import options as worded_options
from agent.engine.questions import NOT_SURE, PAIR_TEMPLATES, TRIAD_TEMPLATES, lint, question_hash
from agent.schemas import (
    MAX_NODES,
    AgentState,
    AskUserAction,
    ClusterThemesAction,
    ConfidenceUpdateAction,
    CounterfactualTestAction,
    CruxNode,
    Evidence,
    EvidenceRequestAction,
    HypothesizeAction,
    SilenceCheckAction,
)

RETIRE_BELOW = 0.04
PICKED_QUESTIONS = 2  # questions after which a writer who has picked a reading is not asked more


@dataclass
class Candidate:
    action: Any
    evi: float
    cost: float
    run: Callable[[], Evidence | None] = field(repr=False)
    score: float = 0.0


def answer_history(state: AgentState) -> list[list[float]]:
    """P(answer | persona) of every answer so far (engine/answers.py), oldest first."""
    return [
        e.payload["personas"]
        for e in state.evidence_log
        if e.kind == "UserAnswer" and e.payload.get("personas")
    ]


def question_table(
    nodes: Sequence[CruxNode],
    targets: Sequence[str],
    options: Sequence[str],
    *,
    history: Sequence[Sequence[float]],
) -> dict[str, list[float]]:
    """P(option | h, earlier answers) over the active ``nodes`` and OTHER for a question
    contrasting ``targets`` (node ids) with the substantive ``options`` in the same order;
    ``history`` is ``answer_history(state)`` (see engine/answers.py). Callers read the nodes
    and the history once per turn: a turn scores many candidate questions."""
    statements = {str(n.node_id): statement(n) for n in nodes}
    assert all(t in statements for t in targets), "targets are active nodes"
    return answer_table(
        statements,
        options,
        latent=latent_statements([n.archetype for n in nodes]),
        history=history,
    )


def _done(state: AgentState) -> set[str]:
    done = set()
    for e in state.evidence_log:
        kind = e.payload.get("action_type", "")
        done.add(kind + ":" + str(e.payload.get("kind", "")))
    return done


def _asked(state: AgentState) -> tuple[set[str], list[str]]:
    hashes, templates = set(), []
    for e in state.evidence_log:
        if e.kind == "UserAnswer":
            hashes.add(e.payload.get("question_hash", ""))
            templates.append(e.payload.get("template_id", ""))
    return hashes, templates[-2:]


@dataclass(frozen=True)
class _Turn:
    """What every candidate of one turn reads: the state, its beliefs and the tuning."""

    state: AgentState
    beliefs: Beliefs
    config: EngineConfig
    nodes: list[CruxNode]
    by_id: dict[str, CruxNode]
    arche: dict[str, str]  # node id → archetype
    done: set[str]  # "action_type:kind" of the internal actions already run

    @classmethod
    def of(cls, state: AgentState, beliefs: Beliefs, config: EngineConfig) -> _Turn:
        nodes = active_nodes(state)
        by_id = {str(n.node_id): n for n in nodes}
        arche = {nid: n.archetype for nid, n in by_id.items()}
        return cls(state, beliefs, config, nodes, by_id, arche, _done(state))

    @property
    def joint(self) -> dict[str, float]:
        return self.beliefs.joint

    @property
    def text(self) -> str:
        return self.state.journal_entry.text


def enumerate_and_score(
    state: AgentState, beliefs: Beliefs, rng: random.Random, config: EngineConfig
) -> list[Candidate]:
    """Every action worth considering this turn, with its EVI, cost and score (spec 004 §5.2-
    5.3). The order is the tie-break: the first of equally scored candidates is chosen."""
    turn = _Turn.of(state, beliefs, config)
    out = [
        *_ask_user(turn, rng),
        *_counterfactual_test(turn),
        *_evidence_requests(turn),
        *_silence_check(turn),
        *_hypothesize(turn),
        *_cluster_themes(turn),
        *_confidence_update(turn),
    ]
    for c in out:
        c.score = c.evi - config.lambda_cost * c.cost
    return out


def _with_other(table: dict[str, list[float]], other_row: list[float]) -> dict[str, list[float]]:
    return {**table, OTHER: other_row}


def _ask_user(turn: _Turn, rng: random.Random) -> list[Candidate]:
    """AskUser: tight pairs among the top four, and the triads; one wording per contrast."""
    if turn.state.budget_used >= turn.config.max_user_queries:
        return []
    asked, recent = _asked(turn.state)
    history = answer_history(turn.state)
    shown, passed = _offered(turn.state)
    if passed and turn.state.budget_used >= PICKED_QUESTIONS:
        # The writer has chosen among the readings; a third question re-asks a choice already
        # made (train writers: as accurate without it, 0.2 fewer questions a play). Only a
        # writer who was never able to choose is asked again.
        return []
    ranked = [h for h in turn.beliefs.ranked() if h not in passed][:4]
    contrasts = [list(p) for p in itertools.combinations(ranked, 2)]
    contrasts += [list(t) for t in itertools.combinations(ranked, 3)]
    # Every question offers at least one crux the writer has not read yet: asking again among
    # the ones they have read only repeats the choice they made (or declined).
    contrasts = [c for c in contrasts if any(h not in shown for h in c)]
    out = []
    for targets in contrasts:
        candidate = _question(turn, targets, rng, asked=asked, recent=recent, history=history)
        if candidate is not None:
            out.append(candidate)
    return out


def _offered(state: AgentState) -> tuple[set[str], set[str]]:
    """Hypotheses the writer has been shown as options, and those they passed over for another
    option (a "not sure" passes over none)."""
    shown: set[str] = set()
    passed: set[str] = set()
    for e in state.evidence_log:
        targets = e.payload.get("targets") if e.kind == "UserAnswer" else None
        if not targets:
            continue
        index = e.payload.get("option_index", -1)
        shown.update(targets)
        if 0 <= index < len(targets):
            passed.update(t for i, t in enumerate(targets) if i != index)
    return shown, passed


def _question(
    turn: _Turn,
    targets: list[str],
    rng: random.Random,
    *,
    asked: set[str],
    recent: list[str],
    history: list[list[float]],
) -> Candidate | None:
    """The first wording (in a shuffled order) that passes the linter and was not used in the
    last two questions; None when this contrast was already asked, in any wording."""
    rng.shuffle(targets)
    templates = list(PAIR_TEMPLATES if len(targets) == 2 else TRIAD_TEMPLATES)
    rng.shuffle(templates)
    keys = [turn.arche[t] + ":" + t[:8] for t in targets]
    for template_id, stem in templates:
        if question_hash(keys) in asked:
            return None
        if template_id in recent:
            continue
        catalogue = [option_text(turn.by_id[t]) for t in targets]
        if not lint(stem, [*catalogue, NOT_SURE]).ok:
            continue
        shown = shown_options(turn.text, [turn.by_id[t] for t in targets], stem)
        options = [*shown, NOT_SURE]
        table = options_table(turn.nodes, targets, shown, history=history)
        evi = expected_information_gain(turn.joint, table)
        action = AskUserAction(
            question=stem,
            quick_options=options,
            targets=[turn.by_id[t].node_id for t in targets],
            rationale=contrast_rationale([_theme_name(turn.arche[t]) for t in targets]),
        )
        return Candidate(action, evi, turn.config.cost_askuser, lambda: None)
    return None


def options_table(
    nodes: Sequence[CruxNode],
    targets: Sequence[str],
    shown: Sequence[str],
    *,
    history: Sequence[Sequence[float]],
) -> dict[str, list[float]]:
    """P(option | h) for a question showing ``shown`` (substantive options, targets in order).
    When they are the targets' own cruxes (compose.options), the writer recognises theirs
    (answers.pick_table); when they are the catalogue's options, the archetype answer model
    reads them (answers.answer_table, conditioned on the earlier answers)."""
    by_id = {str(n.node_id): n for n in nodes}
    catalogue = [option_text(by_id[t]) for t in targets]
    if list(shown) != catalogue:
        return pick_table(list(by_id), targets)
    return question_table(nodes, targets, catalogue, history=history)


def shown_options(entry: str, nodes: Sequence[CruxNode], stem: str) -> list[str]:
    """The quick options a writer reads for ``nodes``: the crux each would confirm, in the
    entry's words (the chat model's proposal or compose.options: proposals.options), or the
    catalogue's options when the entry's words do not make a fair set (the linter refuses
    them) or a node is the writer's own words."""
    catalogue = [option_text(n) for n in nodes]
    grounded = worded_options(entry, nodes)
    if grounded is None or len(set(grounded)) < len(grounded):
        return catalogue
    return grounded if lint(stem, [*grounded, NOT_SURE], quoting=entry).ok else catalogue


def _theme_name(archetype: str) -> str:
    return THEMES.get(archetype, "your own words")


def _counterfactual_test(turn: _Turn) -> list[Candidate]:
    """CounterfactualTest: persistent vs situational drivers."""
    if "CounterfactualTest:" in turn.done:
        return []
    table = _with_other(obs.counterfactual_table(turn.arche), [0.45, 0.45, 0.1])
    outcome, markers = obs.counterfactual_observe(turn.text)
    action = CounterfactualTestAction(
        test_spec={"contrast": "persistent vs situational", "source": "entry", **markers}
    )
    labels = ["persistent", "situational", "unclear"]
    return [
        _internal(turn, action, "MicroExperimentResult", table, outcome, labels, markers),
    ]


def _evidence_requests(turn: _Turn) -> list[Candidate]:
    """EvidenceRequest: one per kind of context (none before the writer's first answer, or
    none at all, when the config says so)."""
    mode = turn.config.evidence_requests
    answered = any(e.kind == "UserAnswer" for e in turn.state.evidence_log)
    if mode == "off" or (mode == "after_answer" and not answered):
        return []
    out = []
    for kind in ("timeline", "constraints", "goals", "norms"):
        if f"EvidenceRequest:{kind}" in turn.done:
            continue
        table = _with_other(obs.context_table(kind, turn.arche), [0.5, 0.5])
        outcome, found = obs.context_observe(kind, turn.text)
        action = EvidenceRequestAction(kind=kind)  # type: ignore[arg-type]
        details = {"found": found}
        labels = ["present", "absent"]
        out.append(
            _internal(turn, action, "ContextDatum", table, outcome, labels, details, kind=kind)
        )
    return out


def _silence_check(turn: _Turn) -> list[Candidate]:
    """SilenceCheck: is the leading node actually voiced in the entry? Not for a seed: its
    prior already read the entry's cues (see observations.silence_table), so there is nothing
    new."""
    leading = turn.beliefs.ranked()
    top_node = turn.by_id[leading[0]] if leading else None
    if "SilenceCheck:" in turn.done or top_node is None or top_node.origin == "seed":
        return []
    top = str(top_node.node_id)
    table = _with_other(obs.silence_table(turn.arche, top), [0.45, 0.55])
    outcome, hits = obs.silence_observe(turn.text, turn.arche[top])
    details = {"cues": hits, "node": top}
    labels = ["voiced", "silent"]
    return [_internal(turn, SilenceCheckAction(), "PatternSignal", table, outcome, labels, details)]


def _internal(
    turn: _Turn,
    action: Any,
    ev_kind: str,
    table: dict[str, list[float]],
    outcome: int,
    labels: list[str],
    details: dict[str, Any],
    *,
    kind: str = "",
) -> Candidate:
    """A candidate that observes the entry: its EVI from ``table``, its run records
    ``outcome``."""
    run = observe_internal(
        turn.state, turn.beliefs, action, ev_kind, table, outcome, labels, details, req_kind=kind
    )
    evi = expected_information_gain(turn.joint, table)
    return Candidate(action, evi, turn.config.cost_internal, run)


def _hypothesize(turn: _Turn) -> list[Candidate]:
    """Hypothesize: when the latent "something else" holds mass and there is room."""
    state = turn.state
    spawnable = spawn_candidates(state, turn.beliefs)
    room = min(
        turn.config.max_hypotheses - len(turn.nodes), MAX_NODES - len(state.belief_state.nodes)
    )
    if not spawnable or room <= 0:
        return []
    p_other = turn.joint[OTHER]
    # Observation: does a new candidate account for the uncovered mass? Model P(yes | other)
    # high, P(yes | covered) low; its EIG is what spawning can tell us.
    table = {h: ([0.8, 0.2] if h == OTHER else [0.25, 0.75]) for h in turn.joint}
    evi = expected_information_gain(turn.joint, table)
    k = min(3, room, len(spawnable))
    action = HypothesizeAction(spawn_k=k)
    radius = turn.config.merge_radius

    def run() -> Evidence:
        return spawn_nodes(state, spawnable[:k], p_other, action, merge_radius=radius)

    return [Candidate(action, evi, turn.config.cost_internal, run)]


def _cluster_themes(turn: _Turn) -> list[Candidate]:
    """ClusterThemes: near-duplicate statements (cosine ≥ merge radius) split mass that belongs
    together; merging them is a deterministic observation worth H(before) - H(after).
    "HDBSCAN" here is the density view cut at one level: clusters are pairs within the merge
    radius (min size 2); "spectral" additionally requires both to sit on the same side of the
    similarity graph's Fiedler cut."""
    spectral = turn.config.cluster_spectral
    pairs = near_duplicates(turn.nodes, turn.config.merge_radius)
    if pairs and spectral:
        side = spectral_sides(turn.nodes)
        pairs = [(a, b, c) for a, b, c in pairs if side[a.node_id] == side[b.node_id]]
    if not pairs:
        return []
    merged_joint = dict(turn.joint)
    for a, b, _ in pairs:
        ka, kb = str(a.node_id), str(b.node_id)
        if ka in merged_joint and kb in merged_joint:
            merged_joint[ka] += merged_joint.pop(kb)
    evi = _entropy_drop(turn.joint, merged_joint)
    action = ClusterThemesAction(method="spectral" if spectral else "HDBSCAN")
    state = turn.state
    return [
        Candidate(
            action, evi, turn.config.cost_internal, lambda: cluster_themes(state, pairs, action)
        )
    ]


def _confidence_update(turn: _Turn) -> list[Candidate]:
    """ConfidenceUpdate: retire dominated nodes and renormalise."""
    joint = turn.joint
    weak = [h for h in turn.beliefs.ranked() if joint[h] < RETIRE_BELOW]
    if not weak or len(turn.nodes) - len(weak) < 2:
        return []
    kept = normalise({h: p for h, p in joint.items() if h not in weak})
    action = ConfidenceUpdateAction()
    state = turn.state
    return [
        Candidate(
            action,
            _entropy_drop(joint, kept),
            turn.config.cost_internal,
            lambda: retire_nodes(state, weak, joint, action),
        )
    ]


def _entropy_drop(before: dict[str, float], after: dict[str, float]) -> float:
    return max(0.0, entropy(list(before.values())) - entropy(list(after.values())))


def contrast_rationale(names: list[str]) -> str:
    """The one-liner the journal page shows under a question (spec 004: "rationale ... for
    UI"): what the question tells apart, in words a writer reads."""
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"This question tells apart {listed}."
