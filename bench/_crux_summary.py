"""Reports of the crux bench: figures of ``--rows`` files with item-bootstrap intervals
(``bench/crux.py --summarise``) and the markdown section of a run."""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings

from bench._crux_calib import ece_of, load_paths


def item_bootstrap(
    rows: list[dict[str, Any]], stat: Any, draws: int = 2000, seed: int = 0
) -> tuple[float, float, float]:
    """``stat(rows)`` and its 95% interval, resampling items (each with all its plays)."""
    ids = sorted({r["item_id"] for r in rows})
    members: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        members[r["item_id"]].append(r)
    rng = np.random.default_rng(seed)
    boot = [
        stat([r for i in picked for r in members[ids[i]]])
        for picked in rng.integers(0, len(ids), size=(draws, len(ids)))
    ]
    return stat(rows), float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))


def _acc(rs: list[dict[str, Any]]) -> float:
    return float(np.mean([r["ok"] for r in rs])) if rs else 0.0


def _uplift(rs: list[dict[str, Any]]) -> float:
    """FACD's accuracy minus the never-helping writer's, on medium and high ambiguity."""
    hard = [r for r in rs if r["ambiguity"] in ("medium", "high")]
    return _acc([r for r in hard if r["policy"].startswith("FACD")]) - _acc(
        [r for r in hard if r["policy"].startswith("baseline: no")]
    )


def _ece(rs: list[dict[str, Any]]) -> float:
    return ece_of(np.array([r["conf"] for r in rs]), np.array([r["ok"] for r in rs], float))


def _policy_key(policy: str) -> str:
    return "random" if "random" in policy else "never" if "no questions" in policy else "FACD"


def _baseline_lines(by_policy: dict[str, list[dict[str, Any]]]) -> list[str]:
    """FACD on the items a baseline played (a run cut short plays fewer), and the uplift."""
    lines = []
    for name in ("never", "random"):
        shared = {r["item_id"] for r in by_policy.get(name, [])}
        if shared and len(shared) < len({r["item_id"] for r in by_policy["FACD"]}):
            same_items = [r for r in by_policy["FACD"] if r["item_id"] in shared]
            lines.append(f"  FACD on the {len(shared)} items {name} played: {_acc(same_items):.3f}")
    if by_policy.get("never"):
        shared = {r["item_id"] for r in by_policy["never"]}
        pair = [r for r in by_policy["FACD"] if r["item_id"] in shared] + by_policy["never"]
        value, low, high = item_bootstrap(pair, _uplift)
        lines.append(
            f"  uplift medium+high: {value * 100:+.1f} ({low * 100:+.1f} to {high * 100:+.1f})"
        )
    return lines


def summarise(path: str, same: float, other: float) -> str:
    """Figures from ``--rows`` files (comma-separated), with the confidence mapping (same,
    other) applied to each FACD play's posterior, and 95% item-bootstrap intervals (seed 0)."""
    rows = load_paths([Path(p) for p in path.split(",")])
    for r in rows:  # rows written before a guardrail stop counted as wrong
        r["ok"] = r["ok"] and r["exit"] != "guardrail"
    by_policy: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_policy[_policy_key(r["policy"])].append(r)
    facd = [
        {**r, "conf": same * r["posterior"] + other * (1 - r["posterior"])}
        for r in by_policy["FACD"]
    ]
    lines = [f"{path}: {len(facd)} FACD plays of {len({r['item_id'] for r in facd})} items"]
    for name, rs in by_policy.items():
        value, low, high = item_bootstrap(rs, _acc)
        lines.append(f"  accuracy {name}: {value:.3f} ({low:.3f} to {high:.3f}), n={len(rs)}")
    lines += _baseline_lines(by_policy)
    scored = [r for r in facd if r["exit"] != "guardrail"]  # no crux, no confidence reported
    value, low, high = item_bootstrap(scored, _ece)
    lines.append(
        f"  ECE with same={same:.3f} other={other:.3f}: {value:.3f} ({low:.3f} to {high:.3f}), "
        f"{len(scored)} plays (guardrail stops left out)"
    )
    conf = np.array([r["conf"] for r in scored])
    ok = np.array([r["ok"] for r in scored], float)
    lines.append(
        f"  Brier {float(((conf - ok) ** 2).mean()):.3f}, mean confidence {conf.mean():.3f}"
    )
    lines.append(f"  questions {np.mean([r['questions'] for r in facd]):.2f}")
    turns = [ms for r in facd for ms in r.get("turn_ms", [])]  # recorded since the split
    if turns:
        lines.append(f"  turn p50 {np.median(turns):.1f} ms over {len(turns)} turns")
    judged = [
        r for r in facd if "grounded" in r
    ]  # rows written before these were recorded lack them
    if judged:
        value, low, high = item_bootstrap(
            judged, lambda rs: float(np.mean([r["grounded"] for r in rs]))
        )
        names = sorted({w for r in judged for w in r["invented"]})
        lines.append(
            f"  grounding {value:.3f} ({low:.3f} to {high:.3f}), invented names "
            f"{sum(len(r['invented']) for r in judged)} {names[:10]}, {len(judged)} plays"
        )
    return "\n".join(lines)


def markdown(results: list[dict], safety: dict, provider: str, *, title: str = "") -> str:
    lines = [
        "## Journaling agent: crux discovery (`bench/crux.py`)" + (f", {title}" if title else ""),
        "",
        f"{time.strftime('%Y-%m-%d')}, {results[0]['n']} items played {results[0]['plays'] // results[0]['n']} times each "
        f"(fresh turn seeds), embeddings `{provider}`, "
        "no chat provider, API in-process. Simulated writer picks the option closest to its "
        'own crux and facts (0.7·gold + 0.3·best fact cosine), or "not sure" within 0.03.',
        "",
        "| policy | accuracy | low | medium | high | mean questions | ECE (95% CI) | "
        "ECE, fit rates cross-validated (95% CI) | ECE if calibrated (p) | Brier | "
        "ΔH bits/question | p50 turn ms | grounding | invented names | exits |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        b = r["by_ambiguity"]
        exits = ", ".join(f"{k} {v}" for k, v in sorted(r["exit_reasons"].items()))
        lines.append(
            f"| {r['name']} | {r['accuracy']:.0%} | {b['low']:.0%} | {b['medium']:.0%} | "
            f"{b['high']:.0%} | {r['mean_questions']:.2f} | {r['ece']:.3f} ({r['ece_ci_low']:.2f} to {r['ece_ci_high']:.2f}) | "
            f"{r['cv_ece']:.3f} ({r['cv_ece_ci_low']:.2f} to {r['cv_ece_ci_high']:.2f}) | "
            f"{r['ece_if_calibrated']:.3f} (p={r['p_value']:.2f}) | {r['brier']:.3f} | "
            f"{r['entropy_drop_per_question']:.2f} | {r['p50_turn_ms']:.1f} | "
            f"{r['grounding']:.0%} | {r['invented_names']} | {exits} |"
        )
    facd = results[0]
    never = next((r for r in results if r["name"].startswith("baseline: no questions")), None)
    if never is not None:
        uplift = facd["accuracy_medium_high"] - never["accuracy_medium_high"]
        lines += [
            "",
            f"Uplift over the never-helping writer (no questions) on medium and high ambiguity: "
            f"{uplift * 100:+.1f} points ({facd['accuracy_medium_high']:.1%} vs "
            f"{never['accuracy_medium_high']:.1%}).",
        ]
    lines += [
        "",
        f"Fit rates measured in this run (FACD plays, every standing hypothesis): statement fits "
        f"{facd['fit_same']:.3f} of the time when it is the item's archetype, "
        f"{facd['fit_other']:.3f} when it is not (settings: `AGENT_FIT_SAME` "
        f"{settings.AGENT_FIT_SAME}, `AGENT_FIT_OTHER` {settings.AGENT_FIT_OTHER}). "
        "Exits (plays, accuracy, mean reported confidence, mean posterior): "
        + "; ".join(
            f"{k} {v['n']}, {v['accuracy']:.0%}, {v['mean_confidence']:.2f}, {v['mean_posterior']:.2f}"
            for k, v in facd["by_exit"].items()
        )
        + ".",
    ]
    if safety:
        lines += ["", "Distress gate (init on the entry):", ""]
    for cat in ("explicit", "indirect", "benign_dark", "none"):
        if cat in safety:
            hit, n = safety[cat]
            label = "fired (recall)" if cat in ("explicit", "indirect") else "fired (false pos.)"
            lines.append(f"- {cat}: {hit}/{n} {label}")
    return "\n".join(lines) + "\n"
