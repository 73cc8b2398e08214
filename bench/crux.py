"""Crux-discovery benchmark: plays ../shared/datasets/crux_dev.jsonl against POST /v3/agent/act
with a simulated writer, plus the safety set against the distress gate, and compares the agent
with two baselines in the same run.

    EMBEDDING_PROVIDER=local python bench/crux.py [--repeat 3] [--write docs/benchmarks.md]
    python bench/crux.py --data crux   # the writer sets: train (writer_01..04), held out (05, 06)

``--data`` takes ``dev`` (../shared/datasets/crux_dev.jsonl, the default), ``crux`` (the writer
sets of tests/agent/fixtures/crux, train and held-out reported separately) or a comma-separated
list of jsonl paths. Besides accuracy, uplift, questions and ECE it reports grounding (the share
of final cruxes whose cited spans all occur verbatim in the entry) and invented names
(capitalised words of a crux that the entry never uses).

The writer knows its own crux (gold_crux) and its facts and picks the quick option closest to
them (sentence-embedding cosine); when no option stands out it answers "not sure / something
else". A confirmed crux is correct when it is closer to gold_crux than to every decoy (the
dataset's rule, with all-MiniLM-L6-v2). The API runs in-process (Django test client) with a
local-memory cache, so nothing but the embedding model is needed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# Run as a script, bench/ is first on the path: no module of bench/ may shadow a package the
# URLconf imports (the MCP bench is bench/mcp_round_trip.py, not bench/mcp.py, for that reason).
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legacymind.settings")
os.environ.setdefault("EMBEDDING_PROVIDER", "local")
os.environ.setdefault("DJANGO_DEBUG", "1")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.test.utils import override_settings  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from agent.engine.compose import compose, invented_names  # noqa: E402
from legacymind.providers.embeddings import get_provider  # noqa: E402

DATA = ROOT.parent / "shared" / "datasets"
WRITERS = ROOT / "tests" / "agent" / "fixtures" / "crux"
SPLITS = {
    "train": [WRITERS / f"writer_0{i}.jsonl" for i in (1, 2, 3, 4)],
    "held-out": [WRITERS / f"writer_0{i}.jsonl" for i in (5, 6)],
}
NOT_SURE = "Not sure / something else"
MARGIN = 0.03  # the writer says "not sure" when its two best options are this close


def signed_in() -> APIClient:
    """A client signed in as the bench's writer (the agent needs a login). The user is never
    saved: authentication is forced, so the bench writes nothing into the dev database, and
    it skips the token lookup, as the anonymous calls it replaced did."""
    client = APIClient()
    client.force_authenticate(User(pk=0, username="crux-bench"))
    return client


def embed(texts: list[str]) -> np.ndarray:
    return get_provider().embed(texts)


def load(name: str) -> list[dict[str, Any]]:
    path = DATA / name
    if not path.exists():
        raise SystemExit(
            f"bench/crux.py needs the dev set {path} (the workspace's shared/datasets beside the checkout)"
        )
    return [json.loads(line) for line in path.open() if line.strip()]


def load_paths(paths: list[Path]) -> list[dict[str, Any]]:
    return [json.loads(line) for path in paths for line in path.open() if line.strip()]


def writer_answer(item: dict[str, Any], options: list[str]) -> str:
    substantive = [o for o in options if o != NOT_SURE]
    know = embed([item["gold_crux"]] + item["facts"])
    opts = embed(substantive)
    gold_sim = opts @ know[0]
    fact_sim = (opts @ know[1:].T).max(axis=1) if len(item["facts"]) else 0 * gold_sim
    score = 0.7 * gold_sim + 0.3 * fact_sim
    order = np.argsort(-score)
    if len(order) > 1 and score[order[0]] - score[order[1]] < MARGIN:
        return NOT_SURE
    return substantive[int(order[0])]


def correct(item: dict[str, Any], crux: str) -> bool:
    vectors = embed([crux, item["gold_crux"], *item["decoys"]])
    sims = vectors[1:] @ vectors[0]
    return bool(sims[0] > sims[1:].max())


POSTERIOR = re.compile(r"posterior ([0-9.]+)")


def active_nodes(state: dict[str, Any]) -> list[tuple[str, str]]:
    """(archetype, text) of the hypotheses still standing at the end of a play."""
    return [
        (n["archetype"], n["text"])
        for n in state["belief_state"]["nodes"]
        if n["status"] == "active"
    ]


def entropy(probs: dict[str, float]) -> float:
    return -sum(p * math.log2(p) for p in probs.values() if p > 0)


def play(client: APIClient, item: dict[str, Any], *, ask: bool) -> dict[str, Any]:
    latencies = []

    def post(body: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        response = client.post("/v3/agent/act", body, format="json")
        latencies.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.content
        return response.json()

    data = post({"mode": "init", "journal_entry": {"text": item["entry"]}})
    h0 = entropy(data["state"]["belief_state"]["probs"])
    if not ask and not data["complete"]:
        state = data["state"]
        top = state["belief_state"]["top_ids"][0]
        node = next(n for n in state["belief_state"]["nodes"] if n["node_id"] == top)
        # The same composer the final turn uses, so the baseline differs only by the questions.
        composed = compose(item["entry"], node["archetype"], fallback=node["text"])
        return {
            "crux": composed.text,
            "spans": composed.spans,
            "confidence": state["belief_state"]["probs"][top],
            "posterior": state["belief_state"]["probs"][top],
            "nodes": active_nodes(state),
            "questions": 0,
            "asked": [],
            "exit": "no_questions",
            "latency": latencies,
            "h_drop": 0.0,
        }
    asked = []  # (target archetypes in option order, index of the answer): --fit-answers reads it
    while not data["complete"]:
        action = data["action"]
        event = None
        if action["type"] == "AskUser":
            value = writer_answer(item, action["quick_options"])
            arche = {n["node_id"]: n["archetype"] for n in data["state"]["belief_state"]["nodes"]}
            asked.append(
                (
                    [arche.get(t, "") for t in action["targets"]],
                    action["quick_options"].index(value),
                )
            )
            event = {"answer_to": action["action_id"], "value": value}
        data = post({"mode": "continue", "state": data["state"], "user_event": event})
    result = data["result"]
    crux = result["confirmed_crux"]
    posterior = POSTERIOR.search(result["reasoning_trail"])
    return {
        "crux": crux["text"] if crux else "",
        "spans": crux.get("evidence_spans", []) if crux else [],
        "confidence": crux["confidence"] if crux else 0,
        "posterior": float(posterior.group(1)) if posterior else 0.0,
        "nodes": active_nodes(data["state"]),
        "questions": data["state"]["budget_used"],
        "asked": asked,
        "exit": result["exit_reason"],
        "latency": latencies,
        "h_drop": h0 - entropy(data["state"]["belief_state"]["probs"]),
    }


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


def _write_row(path: str, r: dict[str, Any], policy: str) -> None:
    keep = ("item_id", "ambiguity", "archetype", "exit", "questions", "posterior")
    record = {k: r[k] for k in keep}
    record.update(policy=policy, ok=bool(r["ok"]), confidence=r["confidence"])
    record.update(grounded=r["grounded"], invented=r["invented"], asked=r["asked"])
    with open(path, "a") as fh:
        fh.write(json.dumps(record) + "\n")


def run_policy(
    items: list[dict[str, Any]],
    *,
    name: str,
    ask: bool,
    policy: str,
    repeat: int,
    rows_out: str = "",
) -> dict:
    rows = []
    with override_settings(AGENT_POLICY=policy):
        client = signed_in()
        # Each play draws fresh state ids, so turn seeds (and tie-breaks) differ between repeats.
        for _ in range(repeat):
            for index, item in enumerate(items):
                r = play(client, item, ask=ask)
                # No crux (a guardrail stop) is never right: the empty string can still sit
                # closer to gold_crux than to the decoys.
                r["ok"] = bool(r["crux"]) and correct(item, r["crux"])
                spans = r.pop("spans")
                r["grounded"] = bool(spans) and all(sp in item["entry"] for sp in spans)
                r["invented"] = invented_names(r["crux"], item["entry"])
                r["node_fits"] = [(a, correct(item, text)) for a, text in r.pop("nodes")]
                r["archetype"] = item["archetype"]
                r["ambiguity"] = item["ambiguity"]
                r["item"] = index
                r["item_id"] = item.get("id", str(index))
                rows.append(r)
                if rows_out:  # each play as it ends: a run cut short keeps what it played
                    _write_row(rows_out, r, name)
    calib = calibration(rows)
    calib.update(cross_validated(rows))
    by_amb = {
        a: statistics.mean(r["ok"] for r in rows if r["ambiguity"] == a)
        for a in ("low", "medium", "high")
    }
    questions = sum(r["questions"] for r in rows)
    hard = [r["ok"] for r in rows if r["ambiguity"] in ("medium", "high")]
    return {
        "name": name,
        "n": len(items),
        "plays": len(rows),
        "accuracy": statistics.mean(r["ok"] for r in rows),
        "by_ambiguity": by_amb,
        "accuracy_medium_high": statistics.mean(hard) if hard else 0.0,
        "mean_questions": questions / len(rows),
        "grounding": statistics.mean(r["grounded"] for r in rows),
        "invented_names": sum(len(r["invented"]) for r in rows),
        "invented_examples": sorted({w for r in rows for w in r["invented"]})[:10],
        "exit_reasons": dict(Counter(r["exit"] for r in rows)),
        **calib,
        "entropy_drop_per_question": (
            sum(r["h_drop"] for r in rows) / questions if questions else 0.0
        ),
        "p50_turn_ms": statistics.median(x for r in rows for x in r["latency"]),
        "by_exit": {
            reason: {
                "n": len(group),
                "accuracy": statistics.mean(r["ok"] for r in group),
                "mean_confidence": statistics.mean(r["confidence"] for r in group),
                "mean_posterior": statistics.mean(r["posterior"] for r in group),
            }
            for reason in sorted({r["exit"] for r in rows})
            for group in [[r for r in rows if r["exit"] == reason]]
        },
    }


def run_safety(items: list[dict[str, Any]], dev: list[dict[str, Any]]) -> dict:
    client = signed_in()
    fired: dict[str, list[bool]] = defaultdict(list)
    for item in items + dev:
        data = client.post(
            "/v3/agent/act",
            {"mode": "init", "journal_entry": {"text": item["entry"]}},
            format="json",
        ).json()
        # Caught at either level (risk stops the loop, concern shows resources first).
        fired[item["safety"]].append(data["safety"]["level"] != "none")
    return {k: (sum(v), len(v)) for k, v in fired.items()}


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


POLICIES = {
    "facd": ("FACD (EIG - λ·cost)", True, "eig"),
    "never": ("baseline: no questions (top seed after init)", False, "eig"),
    "random": ("baseline: random question choice", True, "random"),
}


def run_all(items: list[dict[str, Any]], args: argparse.Namespace, split: str = "") -> list[dict]:
    """The policies asked for, in order (FACD first: the report compares the others with it)."""
    rows_out = args.rows.replace("{split}", split or "dev") if args.rows else ""
    wanted = [p.strip() for p in args.policies.split(",") if p.strip()]
    if args.no_baselines:
        wanted = ["facd"]
    elif args.skip_random:
        wanted = [p for p in wanted if p != "random"]
    return [
        run_policy(
            items,
            name=POLICIES[key][0],
            ask=POLICIES[key][1],
            policy=POLICIES[key][2],
            repeat=args.repeat,
            rows_out=rows_out,
        )
        for key in wanted
    ]


def splits(data: str) -> dict[str, list[dict[str, Any]]]:
    """The item sets to play, by name: ``dev`` (the old set), ``crux`` (train and held-out
    writers, played and reported apart) or a comma-separated list of jsonl paths."""
    if data == "dev":
        return {"": load("crux_dev.jsonl")}
    if data == "crux":
        return {name: load_paths(paths) for name, paths in SPLITS.items()}
    if data in SPLITS:
        return {data: load_paths(SPLITS[data])}
    return {data: load_paths([Path(p) for p in data.split(",")])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", help="append the results section to this markdown file")
    parser.add_argument(
        "--data",
        default="dev",
        help="dev (default), crux (train and held-out writers), train, held-out, or jsonl paths",
    )
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument(
        "--repeat", type=int, default=3, help="plays of each item per policy (fresh seeds each)"
    )
    parser.add_argument(
        "--no-baselines", action="store_true", help="play the FACD policy only (a quicker run)"
    )
    parser.add_argument(
        "--rows",
        default="",
        help="append every play (item, posterior, confidence, correct, exit) to this jsonl; "
        "{split} in the path is replaced by the split's name (calibration fits read it)",
    )
    parser.add_argument(
        "--policies",
        default="facd,never,random",
        help="which to play, comma-separated, in order: facd, never (no questions), random",
    )
    parser.add_argument(
        "--skip-random", action="store_true", help="leave out the random-question baseline"
    )
    parser.add_argument(
        "--fit-confidence",
        default="",
        help="fit the reported-confidence mapping on a --rows file of the train writers, print "
        "the settings and leave-one-writer-out figures, and stop",
    )
    parser.add_argument(
        "--fit-answers",
        default="",
        help="fit the answer model (AGENT_ANSWER_BETA, AGENT_UNSURE_*, AGENT_PERSONA_BETA) by "
        "maximum likelihood on the questions of a --rows file of the train writers, print it "
        "against the shipped settings leave-one-writer-out, and stop",
    )
    parser.add_argument(
        "--summarise",
        default="",
        help="figures of these --rows files (held out) with item-bootstrap intervals, under the "
        "mapping --fit-confidence fits or, without it, the shipped one",
    )
    args = parser.parse_args()
    if args.fit_answers:
        print(fit_answers(args.fit_answers))
        return
    if args.fit_confidence:
        text, same, other = fit_confidence(args.fit_confidence)
        print(text)
        if args.summarise:
            print(summarise(args.summarise, same, other))
        return
    if args.summarise:  # under the shipped mapping: the confidence the agent reports
        print(summarise(args.summarise, settings.AGENT_FIT_SAME, settings.AGENT_FIT_OTHER))
        return
    cache = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    texts, everything = [], {}
    with override_settings(CACHES=cache, ALLOWED_HOSTS=["*"], AGENT_RATE_PER_MINUTE=0):
        for name, items in splits(args.data).items():
            if args.limit:
                items = items[: args.limit]
            results = run_all(items, args, name)
            safety = (
                run_safety(load("crux_safety_dev.jsonl"), load("crux_dev.jsonl"))
                if args.data == "dev"
                else {}
            )
            texts.append(markdown(results, safety, get_provider().model, title=name))
            everything[name or "dev"] = results
    text = "\n".join(texts)
    print(text)
    print(json.dumps(everything, indent=1, default=str))
    if args.write:
        with open(args.write, "a") as fh:
            fh.write("\n" + text)


if __name__ == "__main__":
    main()
