"""Prometheus metrics of the agent loop (spec 004 §8), on the default registry that /metrics
exposes."""

from __future__ import annotations

import threading

from prometheus_client import Counter, Gauge, Histogram

TURNS = Counter("agent_turns_total", "Turns served by /v3/agent/act", ["mode"])
ACTIONS = Counter("agent_actions_total", "Actions chosen by the agent", ["action_type"])
COMPLETIONS = Counter(
    "agent_completions_total", "Completed sessions by exit reason", ["exit_reason"]
)
LATENCY = Histogram(
    "agent_action_latency_ms",
    "Server time per turn in milliseconds",
    buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000),
)
AVG_LATENCY = Gauge("avg_action_latency_ms", "Mean server time per turn in milliseconds")
ASKUSER_RATE = Gauge("askuser_rate", "Share of turns whose action is AskUser")
ENTROPY_REDUCTION = Histogram(
    "entropy_reduction_bits",
    "Entropy of the belief state removed by a turn (bits)",
    buckets=(0.0, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0),
)
GUARDRAIL = Counter("agent_guardrail_total", "Distress gate firings", ["level", "where"])

_lock = threading.Lock()
_totals = {"turns": 0, "asks": 0, "latency": 0.0}


def observe_turn(
    *,
    mode: str,
    action_type: str,
    exit_reason: str | None,
    latency_ms: float,
    entropy_reduction: float,
) -> None:
    TURNS.labels(mode=mode).inc()
    ACTIONS.labels(action_type=action_type).inc()
    if exit_reason:
        COMPLETIONS.labels(exit_reason=exit_reason).inc()
    LATENCY.observe(latency_ms)
    ENTROPY_REDUCTION.observe(max(0.0, entropy_reduction))
    with _lock:
        _totals["turns"] += 1
        _totals["asks"] += action_type == "AskUser"
        _totals["latency"] += latency_ms
        AVG_LATENCY.set(_totals["latency"] / _totals["turns"])
        ASKUSER_RATE.set(_totals["asks"] / _totals["turns"])
