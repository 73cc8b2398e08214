"""enumerate_actions / score_actions / execute (spec 004 §5.2-5.4)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from agent.engine import observations as obs
from agent.engine.answers import answer_table, latent_statements, statement
from agent.engine.archetypes import BY_KEY
from agent.engine.beliefs import (
    OTHER,
    Beliefs,
    active_nodes,
    near_duplicates,
)
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


def enumerate_and_score(state: AgentState, beliefs: Beliefs, rng: random.Random) -> list[Candidate]:
    nodes = active_nodes(state)
    by_id = {str(n.node_id): n for n in nodes}
    arche = {nid: n.archetype for nid, n in by_id.items()}
    joint = beliefs.joint
    hyps = list(joint)
    text = state.journal_entry.text
    done = _done(state)
    lam = settings.LAMBDA_COST
    internal = settings.AGENT_COST_INTERNAL
    out: list[Candidate] = []

    def with_other(table: dict[str, list[float]], other_row: list[float]) -> dict[str, list[float]]:
        return {**table, OTHER: other_row}

    # AskUser: tight pairs among the top three, and the triad.
    if state.budget_used < settings.MAX_USER_QUERIES:
        asked, recent = _asked(state)
        history = answer_history(state)
        ranked = beliefs.ranked()[:4]
        contrasts = [list(p) for p in itertools.combinations(ranked, 2)]
        contrasts += [list(t) for t in itertools.combinations(ranked, 3)]
        for targets in contrasts:
            rng.shuffle(targets)
            templates = list(PAIR_TEMPLATES if len(targets) == 2 else TRIAD_TEMPLATES)
            rng.shuffle(templates)
            keys = [arche[t] + ":" + t[:8] for t in targets]
            for template_id, stem in templates:
                qhash = question_hash(keys)
                if qhash in asked:
                    break  # this contrast was asked already, in any wording
                if template_id in recent:
                    continue
                options = [option_text(by_id[t]) for t in targets] + [NOT_SURE]
                if not lint(stem, options).ok:
                    continue
                table = question_table(nodes, targets, options[:-1], history=history)
                evi = expected_information_gain(joint, table)
                action = AskUserAction(
                    question=stem,
                    quick_options=options,
                    targets=[by_id[t].node_id for t in targets],
                    rationale=contrast_rationale(
                        [
                            BY_KEY[arche[t]].key.replace("_", " ")
                            if arche[t] in BY_KEY
                            else "your own words"
                            for t in targets
                        ]
                    ),
                )
                cost = settings.AGENT_COST_ASKUSER
                out.append(Candidate(action, evi, cost, lambda: None))
                break

    # CounterfactualTest: persistent vs situational drivers.
    if "CounterfactualTest:" not in done:
        table = with_other(obs.counterfactual_table(arche), [0.45, 0.45, 0.1])
        outcome, markers = obs.counterfactual_observe(text)
        cf_action = CounterfactualTestAction(
            test_spec={"contrast": "persistent vs situational", "source": "entry", **markers}
        )
        out.append(
            Candidate(
                cf_action,
                expected_information_gain(joint, table),
                internal,
                observe_internal(
                    state,
                    beliefs,
                    cf_action,
                    "MicroExperimentResult",
                    table,
                    outcome,
                    ["persistent", "situational", "unclear"],
                    markers,
                ),
            )
        )

    # EvidenceRequest: one per kind of context.
    for kind in ("timeline", "constraints", "goals", "norms"):
        if f"EvidenceRequest:{kind}" in done:
            continue
        table = with_other(obs.context_table(kind, arche), [0.5, 0.5])
        outcome, found = obs.context_observe(kind, text)
        er_action = EvidenceRequestAction(kind=kind)  # type: ignore[arg-type]
        out.append(
            Candidate(
                er_action,
                expected_information_gain(joint, table),
                internal,
                observe_internal(
                    state,
                    beliefs,
                    er_action,
                    "ContextDatum",
                    table,
                    outcome,
                    ["present", "absent"],
                    {"found": found},
                    req_kind=kind,
                ),
            )
        )

    # SilenceCheck: is the leading node actually voiced in the entry? Not for a seed: its prior
    # already read the entry's cues (see observations.silence_table), so there is nothing new.
    leading = beliefs.ranked()
    top_node = by_id[leading[0]] if leading else None
    if "SilenceCheck:" not in done and top_node is not None and top_node.origin != "seed":
        top = str(top_node.node_id)
        table = with_other(obs.silence_table(arche, top), [0.45, 0.55])
        outcome, hits = obs.silence_observe(text, arche[top])
        sc_action = SilenceCheckAction()
        out.append(
            Candidate(
                sc_action,
                expected_information_gain(joint, table),
                internal,
                observe_internal(
                    state,
                    beliefs,
                    sc_action,
                    "PatternSignal",
                    table,
                    outcome,
                    ["voiced", "silent"],
                    {"cues": hits, "node": top},
                ),
            )
        )

    # Hypothesize: when the latent "something else" holds mass and there is room.
    spawnable = spawn_candidates(state, beliefs)
    room = min(settings.MAX_HYPOTHESES - len(nodes), MAX_NODES - len(state.belief_state.nodes))
    if spawnable and room > 0:
        p_other = joint[OTHER]
        # Observation: does a new candidate account for the uncovered mass? Model P(yes | other)
        # high, P(yes | covered) low; its EIG is what spawning can tell us.
        table = {h: ([0.8, 0.2] if h == OTHER else [0.25, 0.75]) for h in hyps}
        evi = expected_information_gain(joint, table)
        k = min(3, room, len(spawnable))
        hy_action = HypothesizeAction(spawn_k=k)
        out.append(
            Candidate(
                hy_action,
                evi,
                internal,
                lambda: spawn_nodes(state, spawnable[:k], p_other, hy_action),
            )
        )

    # ClusterThemes: near-duplicate statements (cosine ≥ MERGE_RADIUS) split mass that belongs
    # together; merging them is a deterministic observation worth H(before) - H(after).
    # "HDBSCAN" here is the density view cut at one level: clusters are pairs within the merge
    # radius (min size 2); "spectral" additionally requires both to sit on the same side of the
    # similarity graph's Fiedler cut.
    pairs = near_duplicates(nodes, settings.MERGE_RADIUS)
    if pairs and settings.AGENT_ENABLE_CLUSTER_SPECTRAL:
        side = spectral_sides(nodes)
        pairs = [(a, b, c) for a, b, c in pairs if side[a.node_id] == side[b.node_id]]
    if pairs:
        merged_joint = dict(joint)
        for a, b, _ in pairs:
            ka, kb = str(a.node_id), str(b.node_id)
            if ka in merged_joint and kb in merged_joint:
                merged_joint[ka] += merged_joint.pop(kb)
        evi = max(0.0, entropy(list(joint.values())) - entropy(list(merged_joint.values())))
        method = "spectral" if settings.AGENT_ENABLE_CLUSTER_SPECTRAL else "HDBSCAN"
        ct_action = ClusterThemesAction(method=method)  # type: ignore[arg-type]
        out.append(
            Candidate(ct_action, evi, internal, lambda: cluster_themes(state, pairs, ct_action))
        )

    # ConfidenceUpdate: retire dominated nodes and renormalise.
    weak = [h for h in beliefs.ranked() if joint[h] < RETIRE_BELOW]
    if weak and len(nodes) - len(weak) >= 2:
        kept = normalise({h: p for h, p in joint.items() if h not in weak})
        evi = max(0.0, entropy(list(joint.values())) - entropy(list(kept.values())))
        cu_action = ConfidenceUpdateAction()
        out.append(
            Candidate(cu_action, evi, internal, lambda: retire_nodes(state, weak, joint, cu_action))
        )

    for c in out:
        c.score = c.evi - lam * c.cost
    return out


def contrast_rationale(names: list[str]) -> str:
    """The one-liner the journal page shows under a question (spec 004: "rationale ... for
    UI"): what the question tells apart, in words a writer reads."""
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"This question tells apart {listed}."
