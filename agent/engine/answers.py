"""Answer model of a quick-option question: P(option | hypothesis), including "not sure / something
else", from how close each option reads to the hypothesis' crux statement.

A writer whose crux is h picks among the offered options by how well each says h: a softmax over
the cosine between h's statement and each option (inverse temperature ``AGENT_ANSWER_BETA``).
They say "not sure" more often when the two best options say h about equally well:
P(not sure) = sigmoid(bias - slope · gap), gap = cosine of the best option - of the runner-up.

Why not a flat table ("a targeted hypothesis picks its own option 80% of the time"): answers are
not independent coin flips. A writer whose crux is loneliness, asked grief vs uncertainty, picks
grief — every time. A flat table reads that as evidence for grief, twice as strong on the second
such answer, and reports 0.9 for a wrong crux. Here, grief and loneliness both explain the answer,
so it moves little mass between them; the latent "something else" stands for the archetypes that
are not in the graph and answers like their average.

The three parameters were fitted by maximum likelihood to the simulated writer's answers on the
dev set (a one-off fit; the fitting script is not in the repository, and docs/benchmarks.md
says the figures were tuned on that set). They describe answer noise, not any entry, so they
are settings, not code.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from django.conf import settings

from agent.engine.archetypes import ARCHETYPES, BY_KEY
from agent.engine.beliefs import OTHER, embed
from agent.schemas import CruxHypothesis, CruxNode


def statement(node: CruxNode | CruxHypothesis) -> str:
    """What a hypothesis claims, independent of how the entry words it: the archetype's crux, or
    the node's own text when it came from the writer's words."""
    return BY_KEY[node.archetype].crux if node.archetype in BY_KEY else node.text


def latent_statements(present: Sequence[str]) -> list[str]:
    """The crux statements the latent "something else" stands for: archetypes not in the graph."""
    return [a.crux for a in ARCHETYPES if a.key not in set(present)]


def answer_rows(statements: Sequence[str], options: Sequence[str]) -> np.ndarray:
    """P(option | statement) for each statement: ``len(options)`` substantive columns, then
    "not sure / something else"."""
    sims = embed(statements) @ embed(options).T  # (hypotheses, options)
    beta = settings.AGENT_ANSWER_BETA
    weights = np.exp(beta * (sims - sims.max(axis=1, keepdims=True)))
    choice = weights / weights.sum(axis=1, keepdims=True)
    lapse = settings.AGENT_ANSWER_LAPSE
    choice = (1.0 - lapse) * choice + lapse / sims.shape[1]
    ordered = np.sort(sims, axis=1)[:, ::-1]
    gap = ordered[:, 0] - ordered[:, 1] if sims.shape[1] > 1 else np.ones(len(sims))
    unsure = 1.0 / (1.0 + np.exp(-(settings.AGENT_UNSURE_BIAS - settings.AGENT_UNSURE_SLOPE * gap)))
    return np.hstack([choice * (1.0 - unsure)[:, None], unsure[:, None]])


def answer_table(
    statements: Mapping[str, str], options: Sequence[str], *, latent: Sequence[str] = ()
) -> dict[str, list[float]]:
    """P(option | h) for every hypothesis id in ``statements`` and, when ``latent`` is given, for
    OTHER as the average row of the latent statements. ``options`` are the substantive quick
    options (targets in order); each row has one more column for "not sure"."""
    ids = list(statements)
    rows = answer_rows([statements[h] for h in ids], options) if ids else np.zeros((0, 0))
    table = {h: [float(x) for x in rows[i]] for i, h in enumerate(ids)}
    if latent:
        table[OTHER] = [float(x) for x in answer_rows(list(latent), options).mean(axis=0)]
    elif ids:
        n = len(options)
        table[OTHER] = [0.7 / n] * n + [0.3]  # nothing latent: an even pick or "not sure"
    return {h: _floor(row) for h, row in table.items()}


def _floor(row: list[float]) -> list[float]:
    """No answer is impossible under any hypothesis: a misclick must not zero a belief."""
    floored = [max(p, 1e-3) for p in row]
    total = math.fsum(floored)
    return [p / total for p in floored]
