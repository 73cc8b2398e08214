"""The crux bench's plays: the simulated writer, the judge of a crux, one play of an entry
against POST /v3/agent/act, a policy over a set of entries, and the distress gate's pass over the
safety set. Imported by bench/crux.py after Django is set up."""

from __future__ import annotations

import json
import math
import re
import statistics
import time
from collections import Counter, defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from django.contrib.auth.models import User
from django.test.utils import override_settings
from rest_framework.test import APIClient

from agent.engine.compose import compose, invented_names
from bench._crux_calib import calibration, cross_validated
from legacymind.providers.embeddings import get_provider

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "datasets"
WRITERS = ROOT / "tests" / "agent" / "fixtures" / "crux"
SPLITS = {
    "train": [WRITERS / f"writer_0{i}.jsonl" for i in (1, 2, 3, 4)],
    # Never tuned on; each scored for several policies, so no longer clean.
    "held-out": [WRITERS / f"writer_{i:02d}.jsonl" for i in range(5, 13)],
    # The clean held-out writers of the next round (scored once for each shipped policy).
    "fresh": [WRITERS / "writer_13.jsonl", WRITERS / "writer_14.jsonl"],
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
    """The writer's and the judge's embeddings, memoised per text: gold cruxes, facts and
    decoys recur in every question and every play (the agent's turns keep their own cache)."""
    return np.vstack([_embed_one(t) for t in texts])


@lru_cache(maxsize=65536)
def _embed_one(text: str) -> np.ndarray:
    return get_provider().embed([text])[0]


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


def _write_row(path: str, r: dict[str, Any], policy: str) -> None:
    keep = ("item_id", "ambiguity", "archetype", "exit", "questions", "posterior")
    record = {k: r[k] for k in keep}
    record.update(policy=policy, ok=bool(r["ok"]), confidence=r["confidence"])
    record.update(grounded=r["grounded"], invented=r["invented"], asked=r["asked"])
    record.update(turn_ms=[round(ms, 2) for ms in r["latency"]])
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


def splits(data: str) -> dict[str, list[dict[str, Any]]]:
    """The item sets to play, by name: ``dev`` (the old set), ``crux`` (train and held-out
    writers, played and reported apart) or a comma-separated list of jsonl paths."""
    if data == "dev":
        return {"": load("crux_dev.jsonl")}
    if data == "crux":  # never the fresh writers: they are scored on their own, once
        return {name: load_paths(SPLITS[name]) for name in ("train", "held-out")}
    if data in SPLITS:
        return {data: load_paths(SPLITS[data])}
    return {data: load_paths([Path(p) for p in data.split(",")])}
