"""Entropy, expected information gain and bounded log-odds updates.

EIG follows specs/README.md exactly: EIG = H(sum_h p(h) P(.|h)) - sum_h p(h) H(P(.|h)), with the
likelihood table P(option | hypothesis) including a "not sure / something else" column.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def entropy(dist: Sequence[float]) -> float:
    """Shannon entropy in bits; zero-probability outcomes contribute nothing."""
    return -sum(p * math.log2(p) for p in dist if p > 0)


def normalise(weights: Mapping[str, float]) -> dict[str, float]:
    total = sum(weights.values())
    if total <= 0:
        n = len(weights) or 1
        return {k: 1.0 / n for k in weights}
    return {k: v / total for k, v in weights.items()}


def expected_information_gain(
    prior: Mapping[str, float], table: Mapping[str, Sequence[float]]
) -> float:
    """Mutual information (bits) between the observation and the hypothesis.

    ``table[h]`` is P(observation | h) over the same outcomes for every h, each row summing to 1.
    """
    outcomes = len(next(iter(table.values())))
    predictive = [sum(prior[h] * table[h][o] for h in prior) for o in range(outcomes)]
    noise = sum(prior[h] * entropy(table[h]) for h in prior)
    return max(0.0, entropy(predictive) - noise)


def _logit(p: float) -> float:
    p = min(max(p, 1e-9), 1 - 1e-9)
    return math.log(p / (1 - p))


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def bounded_update(
    prior: Mapping[str, float],
    likelihood: Mapping[str, float],
    *,
    max_step: float,
    clip: float,
) -> dict[str, float]:
    """Bayes in log-odds space: each hypothesis' log-odds may move at most ``max_step`` per
    observation and stays within ``±clip`` (so no belief saturates at 0 or 1), then renormalise.
    """
    posterior = normalise({h: prior[h] * likelihood[h] for h in prior})
    bounded = {}
    for h in prior:
        before = _logit(prior[h])
        step = max(-max_step, min(max_step, _logit(posterior[h]) - before))
        bounded[h] = _sigmoid(max(-clip, min(clip, before + step)))
    return normalise(bounded)
