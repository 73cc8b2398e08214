"""Calibration of the crux bench: ECE with what it can tell at this sample size, and the fit of
the reported-confidence mapping on the train writers' plays (``bench/crux.py --fit-confidence``)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import numpy as np


def load_paths(paths: list[Path]) -> list[dict[str, Any]]:
    return [json.loads(line) for path in paths for line in path.open() if line.strip()]


def ece_of(confidence: np.ndarray, ok: np.ndarray) -> float:
    """Expected calibration error over ten equal-width confidence bins."""
    bins = np.minimum((confidence * 10).astype(int), 9)
    return float(
        sum(
            (bins == b).mean() * abs(confidence[bins == b].mean() - ok[bins == b].mean())
            for b in np.unique(bins)
        )
    )


def calibration(rows: list[dict[str, Any]], draws: int = 2000) -> dict[str, float]:
    """ECE and Brier, with what ECE can tell at this sample size.

    With a few dozen items ECE is noisy and biased upwards: each bin's accuracy is estimated
    from a handful of outcomes. ``ece_if_calibrated`` is the mean ECE of an agent that is
    calibrated by construction (outcomes drawn as Bernoulli(confidence) for the same
    confidences), ``p_value`` the share of those draws at least as far off as ours, and
    ``ece_ci`` a 95% bootstrap interval over items.
    """
    confidence = np.array([r["confidence"] for r in rows], dtype=float)
    ok = np.array([r["ok"] for r in rows], dtype=float)
    ece = ece_of(confidence, ok)
    rng = np.random.default_rng(0)
    null = np.array([ece_of(confidence, rng.random(len(ok)) < confidence) for _ in range(draws)])
    # The bootstrap resamples items, each with all its repeats: repeats of one entry are not
    # independent evidence.
    item = np.array([r["item"] for r in rows])
    members = [np.flatnonzero(item == i) for i in np.unique(item)]
    boot = []
    for picked in rng.integers(0, len(members), size=(draws, len(members))):
        rows_i = np.concatenate([members[i] for i in picked])
        boot.append(ece_of(confidence[rows_i], ok[rows_i]))
    return {
        "ece": ece,
        "brier": float(((confidence - ok) ** 2).mean()),
        "ece_if_calibrated": float(null.mean()),
        "p_value": float((null >= ece).mean()),
        "ece_ci_low": float(np.quantile(boot, 0.025)),
        "ece_ci_high": float(np.quantile(boot, 0.975)),
    }


def fit_rates(rows: list[dict[str, Any]]) -> tuple[float, float]:
    """How often a standing hypothesis' statement is judged correct when its archetype is the
    item's (``AGENT_FIT_SAME``) and when it is not (``AGENT_FIT_OTHER``)."""
    same = [ok for r in rows for arche, ok in r["node_fits"] if arche == r["archetype"]]
    other = [ok for r in rows for arche, ok in r["node_fits"] if arche != r["archetype"]]
    return (statistics.mean(same) if same else 1.0, statistics.mean(other) if other else 0.0)


def cross_validated(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Calibration with the fit rates measured on the other items only (leave one item out, all
    its repeats in the same fold), applied to each play's posterior: what the shipped rates,
    measured on this whole set, cannot claim for themselves."""
    out = []
    for r in rows:
        same, other = fit_rates([q for q in rows if q["item"] != r["item"]])
        out.append({**r, "confidence": same * r["posterior"] + other * (1 - r["posterior"])})
    calib = calibration(out)
    same, other = fit_rates(rows)
    return {
        "cv_ece": calib["ece"],
        "cv_ece_ci_low": calib["ece_ci_low"],
        "cv_ece_ci_high": calib["ece_ci_high"],
        "cv_brier": calib["brier"],
        "fit_same": same,
        "fit_other": other,
    }


def fit_linear(posterior: np.ndarray, ok: np.ndarray) -> tuple[float, float]:
    """``AGENT_FIT_SAME``, ``AGENT_FIT_OTHER`` by maximum likelihood: P(crux right) =
    same · posterior + other · (1 - posterior), the form agent/engine/confidence.py reports
    (a grid of 0.005 over [0.01, 0.99]²)."""
    grid = np.arange(0.01, 0.9901, 0.005)
    same, other = np.meshgrid(grid, grid, indexing="ij")
    p = same[..., None] * posterior + other[..., None] * (1 - posterior)
    loglik = (ok * np.log(p) + (1 - ok) * np.log(1 - p)).sum(axis=-1)
    i, j = np.unravel_index(int(np.argmax(loglik)), loglik.shape)
    return float(grid[i]), float(grid[j])


def fit_platt(posterior: np.ndarray, ok: np.ndarray) -> tuple[float, float]:
    """Platt scaling on the posterior's log-odds: P(right) = sigmoid(a + b · logit(posterior)),
    by maximum likelihood on a grid (the comparison fit; the agent reports the linear form)."""
    z = np.log(np.clip(posterior, 1e-4, 1 - 1e-4) / (1 - np.clip(posterior, 1e-4, 1 - 1e-4)))
    a_grid, b_grid = np.arange(-3, 3.001, 0.02), np.arange(0, 3.001, 0.02)
    a, b = np.meshgrid(a_grid, b_grid, indexing="ij")
    p = np.clip(1 / (1 + np.exp(-(a[..., None] + b[..., None] * z))), 1e-6, 1 - 1e-6)
    loglik = (ok * np.log(p) + (1 - ok) * np.log(1 - p)).sum(axis=-1)
    i, j = np.unravel_index(int(np.argmax(loglik)), loglik.shape)
    return float(a_grid[i]), float(b_grid[j])


def fit_confidence(path: str) -> tuple[str, float, float]:
    """Fit the reported-confidence mapping on the FACD plays in ``path`` (``--rows`` output of
    the train writers), and compare mappings by leave-one-writer-out ECE and log loss."""
    rows = load_paths([Path(path)])
    # A guardrail stop confirms no crux and reports no confidence: it is left out.
    rows = [r for r in rows if r["policy"].startswith("FACD") and r["exit"] != "guardrail"]
    posterior = np.array([r["posterior"] for r in rows], dtype=float)
    ok = np.array([r["ok"] for r in rows], dtype=float)
    writer = np.array([r["item_id"].split("-")[0] for r in rows])
    same, other = fit_linear(posterior, ok)
    a, b = fit_platt(posterior, ok)

    def linear(fit: np.ndarray, apply: np.ndarray) -> np.ndarray:
        s, o = fit_linear(posterior[fit], ok[fit])
        return s * posterior[apply] + o * (1 - posterior[apply])

    def platt(fit: np.ndarray, apply: np.ndarray) -> np.ndarray:
        a_, b_ = fit_platt(posterior[fit], ok[fit])
        z = np.log(
            np.clip(posterior[apply], 1e-4, 1 - 1e-4)
            / (1 - np.clip(posterior[apply], 1e-4, 1 - 1e-4))
        )
        return 1 / (1 + np.exp(-(a_ + b_ * z)))

    def constant(fit: np.ndarray, apply: np.ndarray) -> np.ndarray:
        return np.full(int(apply.sum()), ok[fit].mean())

    lines = [
        f"{len(rows)} FACD plays, accuracy {ok.mean():.3f}, mean posterior {posterior.mean():.3f}",
        f"linear (agent): AGENT_FIT_SAME={same:.3f} AGENT_FIT_OTHER={other:.3f}",
        f"Platt: a={a:.2f} b={b:.2f}",
        "leave-one-writer-out (fit on three writers, applied to the fourth):",
    ]
    for name, mapping in (
        ("linear", linear),
        ("platt", platt),
        ("constant", constant),
        ("posterior", None),
    ):
        conf = np.zeros_like(posterior)
        for w in np.unique(writer):
            out = writer == w
            conf[out] = posterior[out] if mapping is None else mapping(~out, out)
        conf = np.clip(conf, 1e-6, 1 - 1e-6)
        loss = -float(np.mean(ok * np.log(conf) + (1 - ok) * np.log(1 - conf)))
        lines.append(
            f"  {name}: ECE {ece_of(conf, ok):.3f}, log loss {loss:.3f}, Brier {float(((conf - ok) ** 2).mean()):.3f}"
        )
    return "\n".join(lines), same, other
