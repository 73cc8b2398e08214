"""Belief graph: seeding from salience cues, recomputation from the evidence log (the server
never trusts client-sent probabilities) and embedding-based merging."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.conf import settings

from agent.engine.archetypes import ARCHETYPES, BY_KEY, cue_hits, cue_scores
from agent.engine.compose import distinct
from agent.engine.infotheory import bounded_update, entropy, normalise
from agent.schemas import AgentState, CruxNode
from legacymind.providers.embeddings import get_provider

OTHER = "__other__"  # latent "none of the current nodes" hypothesis
OTHER_PRIOR = 0.12
OTHER_FLOOR = 0.02
SEEDS = 4
SIMILARITY_WEIGHT = 3.0  # how much entry↔crux cosine counts next to one matched cue
# Four seeds: three (one triad question) asked fewer questions but missed the crux more often.


_MEMO: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_MEMO_SIZE = 4096
_MEMO_LOCK = threading.Lock()


def embed(texts: Sequence[str]) -> np.ndarray:
    """Rows for ``texts`` from the configured provider, memoised per (model, text): crux
    statements repeat across turns and requests. The texts not seen yet go to the provider in one
    batch (one call per text made a turn's new texts cost a model pass each)."""
    provider = get_provider()
    keys = [(provider.model, t) for t in texts]
    with _MEMO_LOCK:
        missing = list(dict.fromkeys(k for k in keys if k not in _MEMO))
    if missing:
        vectors = provider.embed([t for _, t in missing]).astype(np.float32)
        with _MEMO_LOCK:
            for key, row in zip(missing, vectors, strict=True):
                _MEMO[key] = row
                _MEMO.move_to_end(key)
            while len(_MEMO) > _MEMO_SIZE:
                _MEMO.popitem(last=False)
    with _MEMO_LOCK:
        found = [_MEMO.get(k) for k in keys]
        for key in keys:
            if key in _MEMO:
                _MEMO.move_to_end(key)  # least recently used goes first
    rows = [r for r in found if r is not None]
    if len(rows) < len(keys):  # evicted meanwhile by a burst of other texts
        return provider.embed(list(texts)).astype(np.float32)
    return np.vstack(rows) if rows else np.zeros((0, provider.dim), dtype=np.float32)


def salience(text: str) -> dict[str, float]:
    """Per archetype: matched cues plus cosine between the entry and its crux statement."""
    cues = cue_scores(text)
    vectors = embed([text] + [a.crux for a in ARCHETYPES])
    sims = vectors[1:] @ vectors[0]
    return {
        a.key: cues[a.key] + SIMILARITY_WEIGHT * max(0.0, float(sim))
        for a, sim in zip(ARCHETYPES, sims, strict=True)
    }


def seed_nodes(text: str, chosen: Sequence[str] | None = None) -> list[CruxNode]:
    """2-4 candidate cruxes, near-uniform priors nudged by salience. ``chosen``: the
    archetypes to seed when the chat model proposed them (agent/engine/proposals.py)."""
    scores = salience(text)
    ranked = sorted(scores, key=lambda k: (-scores[k], k))
    top = scores[ranked[0]] or 1.0
    if chosen is None:
        # The most salient archetypes whose cruxes rest on different sentences: what the writer
        # is shown is the crux, so two seeds citing the same spans would be one reading asked
        # twice.
        chosen = distinct(text, ranked, SEEDS)
        if len(chosen) < 2:  # no sentence to tell them apart by: the two most salient
            chosen = ranked[:2]
    weights = {k: 1.0 + 0.25 * scores[k] / top for k in chosen}
    total = sum(weights.values())
    hits = cue_hits(text)
    return [
        CruxNode(
            text=BY_KEY[k].crux,
            priors=round((1 - OTHER_PRIOR) * weights[k] / total, 6),
            supports=[f'cue "{h}"' for h in hits[k][:4]],
            archetype=k,
            origin="seed",
        )
        for k in chosen
    ]


def active_nodes(state: AgentState) -> list[CruxNode]:
    return [n for n in state.belief_state.nodes if n.status == "active"]


def other_prior(state: AgentState) -> float:
    spawned = sum(n.priors or 0.0 for n in state.belief_state.nodes if n.origin != "seed")
    return max(OTHER_FLOOR, OTHER_PRIOR - spawned)


@dataclass
class Beliefs:
    joint: dict[str, float]  # active node ids and OTHER → probability (sums to 1)

    @property
    def nodes_only(self) -> dict[str, float]:
        return normalise({k: v for k, v in self.joint.items() if k != OTHER})

    def ranked(self) -> list[str]:
        return sorted((k for k in self.joint if k != OTHER), key=lambda k: (-self.joint[k], k))

    @property
    def entropy(self) -> float:
        return entropy(list(self.joint.values()))


def recompute(state: AgentState) -> Beliefs:
    """Replay the evidence log from the priors: bounded log-odds steps, clipped."""
    nodes = active_nodes(state)
    prior = {str(n.node_id): n.priors or 0.0 for n in nodes}
    prior[OTHER] = other_prior(state)
    joint = normalise(prior)
    for evidence in state.evidence_log:
        table = evidence.payload.get("likelihoods")
        if not table:
            continue
        default = float(evidence.payload.get("default", 1.0))
        likelihood = {h: float(table.get(h, default)) for h in joint}
        joint = bounded_update(
            joint,
            likelihood,
            max_step=settings.AGENT_MAX_STEP_LOGIT,
            clip=settings.AGENT_LOGIT_CLIP,
        )
    return Beliefs(joint)


def write_beliefs(state: AgentState, beliefs: Beliefs) -> None:
    """Store the recomputed distribution and ranking in the state (advisory for clients)."""
    from uuid import UUID

    probs = beliefs.nodes_only
    state.belief_state.probs = {UUID(k): round(v, 6) for k, v in probs.items()}
    state.belief_state.top_ids = [UUID(k) for k in beliefs.ranked()]


def near_duplicates(nodes: list[CruxNode], radius: float) -> list[tuple[CruxNode, CruxNode, float]]:
    """Pairs of nodes whose statements have cosine ≥ radius (embedding provider)."""
    if len(nodes) < 2:
        return []
    vectors = embed([n.text for n in nodes])
    sims = vectors @ vectors.T
    pairs = []
    for i in range(len(nodes)):
        for j in range(i + 1, len(nodes)):
            if sims[i, j] >= radius:
                pairs.append((nodes[i], nodes[j], float(sims[i, j])))
    return pairs


def merge(survivor: CruxNode, merged: CruxNode) -> None:
    survivor.priors = round(min(1.0, (survivor.priors or 0) + (merged.priors or 0)), 6)
    survivor.supports = (survivor.supports + merged.supports)[:8]
    merged.status = "merged"
    merged.merged_into = survivor.node_id
