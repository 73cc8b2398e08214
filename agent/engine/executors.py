"""Executors of the internal actions (spec 004 §5.4): each returns the Evidence it observed,
and the spectral partition ClusterThemes can use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent.engine.archetypes import BY_KEY
from agent.engine.beliefs import (
    OTHER,
    Beliefs,
    active_nodes,
    embed,
    merge,
    near_duplicates,
    other_prior,
    salience,
)
from agent.engine.compose import distinct
from agent.schemas import (
    AgentState,
    ClusterThemesAction,
    ConfidenceUpdateAction,
    CruxNode,
    Evidence,
    HypothesizeAction,
)

# Coverage is "low" when the latent "something else" holds this much mass: only then is it worth
# spawning archetypes the entry's cues ranked lower.
HYPOTHESIZE_OTHER = 0.2


def _evidence(state: AgentState, kind: str, payload: dict[str, Any]) -> Evidence:
    return Evidence(kind=kind, payload=payload, at_revision=state.revision + 1)  # type: ignore[arg-type]


def _observed(
    state: AgentState,
    beliefs: Beliefs,
    table: dict[str, list[float]],
    outcome: int,
    other_row: list[float],
) -> dict[str, Any]:
    likelihoods = {h: round(row[outcome], 6) for h, row in table.items()}
    return {"likelihoods": likelihoods, "default": round(other_row[outcome], 6)}


def spectral_sides(nodes: list[CruxNode]) -> dict[Any, int]:
    """Two-way spectral partition (sign of the Fiedler vector of the normalised Laplacian of
    the cosine-similarity graph): with ``spectral`` clustering only nodes on the same side are
    merged, so a chain of pairwise-similar statements cannot collapse two themes into one."""
    import numpy as np

    if len(nodes) < 3:
        return {n.node_id: 0 for n in nodes}
    vectors = embed([n.text for n in nodes])
    weights = np.clip(vectors @ vectors.T, 0.0, None)
    np.fill_diagonal(weights, 0.0)
    degree = weights.sum(axis=1)
    inv = np.where(degree > 0, 1.0 / np.sqrt(np.maximum(degree, 1e-12)), 0.0)
    laplacian = np.eye(len(nodes)) - inv[:, None] * weights * inv[None, :]
    _, vecs = np.linalg.eigh(laplacian)
    fiedler = vecs[:, 1]
    return {n.node_id: int(fiedler[i] >= 0) for i, n in enumerate(nodes)}


WRITERS_WORDS = "In the writer's words: "
OPTION_WORDS = 12


def option_text(node: CruxNode) -> str:
    """The option a question offers for ``node``: an archetype's own wording, or for a node
    spawned from a free-text answer the writer's words themselves (the first OPTION_WORDS,
    "…" when cut), without the node's prefix: cut to eight words with the prefix, "Mostly I
    feel nobody sees how much I do" was offered as "In the writer's words: Mostly I feel
    nobody", and the writer typing the sentence again no longer matched it."""
    if node.archetype in BY_KEY:
        return BY_KEY[node.archetype].option
    words = node.text.removeprefix(WRITERS_WORDS).split()
    return " ".join(words[:OPTION_WORDS]) + ("…" if len(words) > OPTION_WORDS else "")


def observe_internal(
    state: AgentState,
    beliefs: Beliefs,
    action: Any,
    ev_kind: str,
    table: dict[str, list[float]],
    outcome: int,
    labels: list[str],
    details: dict[str, Any],
    req_kind: str = "",
) -> Callable[[], Evidence]:
    def run() -> Evidence:
        payload: dict[str, Any] = {
            "action_type": action.type,
            "action_id": str(action.action_id),
            "kind": req_kind,
            "outcome": labels[outcome],
            "details": details,
            **_observed(
                state,
                beliefs,
                {h: r for h, r in table.items() if h != OTHER},
                outcome,
                table[OTHER],
            ),
        }
        payload["summary"] = (
            f"{action.type}{'(' + payload['kind'] + ')' if payload['kind'] else ''}: {labels[outcome]}"
        )
        return _evidence(state, ev_kind, payload)

    return run


def spawn_candidates(state: AgentState, beliefs: Beliefs) -> list[tuple[str, str]]:
    """(archetype, text) candidates not yet in the graph: free-text answers first, then the
    most salient uncovered archetypes."""
    present = {n.archetype for n in state.belief_state.nodes}
    spawned_answers = {n.text for n in state.belief_state.nodes if n.origin == "answer"}
    out = []
    for e in state.evidence_log:
        if e.kind == "UserAnswer" and e.payload.get("free_text"):
            text = f"{WRITERS_WORDS}{e.payload.get('value', '')}"[:400]
            if text not in spawned_answers:
                out.append(("open", text))
    if beliefs.joint[OTHER] >= HYPOTHESIZE_OTHER:
        entry = state.journal_entry.text
        scores = salience(entry)
        ranked = sorted(scores, key=lambda k: (-scores[k], k))
        # Only archetypes whose cruxes rest on sentences no present one cites: the writer is
        # shown the crux, and the same sentences under another frame are no new reading.
        fresh = distinct(entry, [*[k for k in ranked if k in present], *ranked], len(ranked))
        out += [(key, BY_KEY[key].crux) for key in fresh if key not in present]
    return out


def spawn_nodes(
    state: AgentState,
    picks: list[tuple[str, str]],
    p_other: float,
    action: HypothesizeAction,
    *,
    merge_radius: float,
) -> Evidence:
    share = round(other_prior(state) * 0.6 / max(1, len(picks)), 6)
    existing = active_nodes(state)
    spawned, merged = [], []
    for key, text in picks:
        node = CruxNode(
            text=text,
            priors=share,
            archetype=key,
            origin="answer" if key == "open" else "spawn",
            supports=["spawned: uncovered mass"],
        )
        state.belief_state.nodes.append(node)
        dupes = [a for a, b, _ in near_duplicates([*existing, node], merge_radius) if b is node]
        if dupes:
            merge(dupes[0], node)
            merged.append(f"{str(node.node_id)[:8]}→{str(dupes[0].node_id)[:8]}")
        else:
            existing.append(node)
            spawned.append(key)
    return _evidence(
        state,
        "PatternSignal",
        {
            "action_type": "Hypothesize",
            "action_id": str(action.action_id),
            "kind": "",
            "spawned": spawned,
            "merged": merged,
            "summary": f"Hypothesize: spawned {', '.join(spawned) or 'nothing new'}"
            + (f"; merged {', '.join(merged)}" if merged else ""),
        },
    )


def cluster_themes(state: AgentState, pairs: list, action: ClusterThemesAction) -> Evidence:
    merged = []
    for a, b, sim in pairs:
        if a.status == "active" and b.status == "active":
            survivor, gone = (a, b) if (a.priors or 0) >= (b.priors or 0) else (b, a)
            merge(survivor, gone)
            merged.append(
                {"into": str(survivor.node_id), "node": str(gone.node_id), "cosine": round(sim, 4)}
            )
    return _evidence(
        state,
        "PatternSignal",
        {
            "action_type": "ClusterThemes",
            "action_id": str(action.action_id),
            "kind": "",
            "method": action.method,
            "merged": merged,
            "summary": f"ClusterThemes: merged {len(merged)} near-duplicate node(s)",
        },
    )


def retire_nodes(
    state: AgentState, weak: list[str], joint: dict[str, float], action: ConfidenceUpdateAction
) -> Evidence:
    for node in state.belief_state.nodes:
        if str(node.node_id) in weak:
            node.status = "retired"
            node.counters.append(f"retired at p={joint[str(node.node_id)]:.3f}")
    return _evidence(
        state,
        "PatternSignal",
        {
            "action_type": "ConfidenceUpdate",
            "action_id": str(action.action_id),
            "kind": "",
            "retired": weak,
            "summary": f"ConfidenceUpdate: retired {len(weak)} dominated node(s)",
        },
    )
