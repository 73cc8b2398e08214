"""The answer-model fit of the crux bench (``bench/crux.py --fit-answers``): the engine's own
answer model scored on the writers' answers recorded in ``--rows`` files, refitted by maximum
likelihood and compared with the shipped settings leave-one-writer-out."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings

from bench._crux_calib import load_paths

ANSWER_SETTINGS = (
    "AGENT_ANSWER_BETA",
    "AGENT_UNSURE_BIAS",
    "AGENT_UNSURE_SLOPE",
    "AGENT_PERSONA_BETA",
)


def _answer_plays(rows: list[dict[str, Any]]) -> list[tuple[str, int, list[tuple[list[int], int]]]]:
    """(writer, index of the item's archetype in the catalogue, the play's questions as
    (catalogue indices of the targets in option order, index of the answer)) of each FACD play
    that asked something. A play is cut at a target that is not a catalogue archetype (a node
    spawned from the writer's words answers as itself, not as a persona)."""
    from agent.engine.archetypes import ARCHETYPES

    keys = [a.key for a in ARCHETYPES]
    plays = []
    for r in rows:
        if not r["policy"].startswith("FACD") or r["archetype"] not in keys:
            continue
        questions = []
        for targets, answer in r.get("asked", []):
            if not all(t in keys for t in targets):
                break
            questions.append(([keys.index(t) for t in targets], int(answer)))
        if questions:
            plays.append((r["item_id"].split("-")[0], keys.index(r["archetype"]), questions))
    return plays


def answer_log_likelihoods(
    plays: list[tuple[str, int, list[tuple[list[int], int]]]], params: Any
) -> np.ndarray:
    """log P(answer | the writer's archetype, their earlier answers) of every question, by the
    engine's own answer model (agent/engine/answers.py) under ``params`` (ANSWER_SETTINGS'
    order; ``AGENT_ANSWER_LAPSE`` as set): the persona mixture of the item's archetype,
    reweighted by the answers so far, as ``answer_table`` computes it for that hypothesis."""
    from agent.engine.answers import CATALOGUE, answer_probs, floor, persona_weights
    from agent.engine.archetypes import ARCHETYPES
    from agent.engine.beliefs import embed as engine_embed

    beta, bias, slope, persona_beta = (float(x) for x in params)
    statements = engine_embed(CATALOGUE)
    to_options = statements @ engine_embed([a.option for a in ARCHETYPES]).T
    prior = persona_weights(statements @ statements.T, persona_beta)
    lapse = settings.AGENT_ANSWER_LAPSE
    tables: dict[tuple[int, ...], np.ndarray] = {}
    out = []
    for _, gold, questions in plays:
        evidence = np.ones(len(CATALOGUE))
        for targets, answer in questions:
            key = tuple(targets)
            if key not in tables:
                tables[key] = answer_probs(
                    to_options[:, targets], beta=beta, lapse=lapse, bias=bias, slope=slope
                )
            table = tables[key]
            weights = prior[gold] * evidence
            weights = weights / weights.sum() if weights.sum() > 0 else prior[gold]
            out.append(math.log(floor([float(x) for x in weights @ table])[answer]))
            evidence = evidence * table[:, answer]
    return np.array(out)


def fit_answer_model(plays: list[tuple[str, int, list[tuple[list[int], int]]]]) -> np.ndarray:
    """ANSWER_SETTINGS by maximum likelihood of the writers' answers (Nelder-Mead within the
    settings' bounds, from the shipped values and a few other starts; the best optimum: the
    floor on each probability makes the surface kinked, so no gradients)."""
    from scipy.optimize import minimize

    bounds = [(0.0, 60.0), (-10.0, 10.0), (0.0, 60.0), (0.0, 60.0)]
    starts = [
        [getattr(settings, k) for k in ANSWER_SETTINGS],
        [4.0, -1.0, 2.0, 6.0],
        [16.0, 0.5, 10.0, 24.0],
        [8.0, -2.0, 8.0, 40.0],
    ]
    best = None
    for x0 in starts:
        found = minimize(
            lambda x: -answer_log_likelihoods(plays, x).sum(),
            np.array(x0, dtype=float),
            method="Nelder-Mead",
            bounds=bounds,
            options={"xatol": 0.01, "fatol": 1e-4, "maxfev": 2000},
        )
        if best is None or found.fun < best.fun:
            best = found
    assert best is not None
    return np.asarray(best.x)


def fit_answers(path: str) -> str:
    """Fit the answer model on the questions of the FACD plays in ``path`` (``--rows`` output
    of the train writers), and compare it with the shipped settings leave-one-writer-out: fit
    on three writers, mean log loss per answer on the fourth."""
    plays = _answer_plays(load_paths([Path(p) for p in path.split(",")]))
    shipped = np.array([getattr(settings, k) for k in ANSWER_SETTINGS], dtype=float)
    fitted = fit_answer_model(plays)
    n = sum(len(q) for _, _, q in plays)
    unsure = [a == len(t) for _, _, q in plays for t, a in q]
    lines = [
        f"{len(plays)} FACD plays, {n} answers ({np.mean(unsure):.0%} 'not sure')",
        "shipped: "
        + " ".join(f"{k}={v:.2f}" for k, v in zip(ANSWER_SETTINGS, shipped, strict=True))
        + f", log loss per answer {-answer_log_likelihoods(plays, shipped).mean():.4f}",
        "fitted:  "
        + " ".join(f"{k}={v:.2f}" for k, v in zip(ANSWER_SETTINGS, fitted, strict=True))
        + f", log loss per answer {-answer_log_likelihoods(plays, fitted).mean():.4f}",
        "leave-one-writer-out (fit on three writers, log loss per answer on the fourth):",
    ]
    total_fit, total_shipped = [], []
    for writer in sorted({w for w, _, _ in plays}):
        train = [p for p in plays if p[0] != writer]
        test = [p for p in plays if p[0] == writer]
        params = fit_answer_model(train)
        fit_loss = -answer_log_likelihoods(test, params)
        shipped_loss = -answer_log_likelihoods(test, shipped)
        total_fit += list(fit_loss)
        total_shipped += list(shipped_loss)
        lines.append(
            f"  {writer}: refit {fit_loss.mean():.4f} vs shipped {shipped_loss.mean():.4f} "
            f"({len(fit_loss)} answers; refit " + " ".join(f"{v:.2f}" for v in params) + ")"
        )
    lines.append(f"  all: refit {np.mean(total_fit):.4f} vs shipped {np.mean(total_shipped):.4f}")
    return "\n".join(lines)
