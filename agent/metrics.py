"""Prometheus metrics of the agent loop (spec 004 §8), exposed at /metrics.

Under gunicorn there are several worker processes, each with its own counters, and a scrape
reaches one of them. gunicorn.conf.py therefore sets ``PROMETHEUS_MULTIPROC_DIR``:
prometheus_client then keeps every process's samples in files there, and :func:`exposition`
adds them up. Without it (``manage.py runserver``, the tests, Celery) the process's own
registry is exposed.

The two means of spec 004 (``avg_action_latency_ms``, ``askuser_rate``) are worked out at
scrape time from the counters, not kept as gauges: a mean per process cannot be added up across
processes, the sums it comes from can.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

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
ENTROPY_REDUCTION = Histogram(
    "entropy_reduction_bits",
    "Entropy of the belief state removed by a turn (bits)",
    buckets=(0.0, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0),
)
GUARDRAIL = Counter(
    "agent_guardrail_total", "Turns stopped by the distress gate", ["level", "where"]
)
# Every detection of the distress detector (agent.safety), by level (concern | risk), warning-sign
# category and the door that read the text; never the text.
DISTRESS = Counter(
    "agent_distress_detections_total",
    "Distress detections by level and warning-sign category",
    ["level", "category", "where"],
)


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


def _total(families: Iterable[Metric], sample: str, **labels: str) -> float:
    """The sum of the samples named ``sample`` whose labels include ``labels``."""
    return sum(
        s.value
        for family in families
        for s in family.samples
        if s.name == sample and labels.items() <= s.labels.items()
    )


def means(families: list[Metric]) -> Iterator[Metric]:
    """avg_action_latency_ms and askuser_rate over every turn counted in ``families``."""
    count = _total(families, "agent_action_latency_ms_count")
    latency = _total(families, "agent_action_latency_ms_sum")
    turns = _total(families, "agent_actions_total")
    asks = _total(families, "agent_actions_total", action_type="AskUser")
    yield GaugeMetricFamily(
        "avg_action_latency_ms",
        "Mean server time per turn in milliseconds",
        value=latency / count if count else 0.0,
    )
    yield GaugeMetricFamily(
        "askuser_rate",
        "Share of turns whose action is AskUser",
        value=asks / turns if turns else 0.0,
    )


class _Exposition:
    """What /metrics shows: ``source``'s families and the means worked out from them."""

    def __init__(self, source: CollectorRegistry) -> None:
        self.source = source

    def collect(self) -> Iterator[Metric]:
        families = list(self.source.collect())
        yield from families
        yield from means(families)


def exposition() -> bytes:
    """The text exposition: every process's samples when PROMETHEUS_MULTIPROC_DIR is set, this
    process's otherwise."""
    source = REGISTRY
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        source = CollectorRegistry()
        multiprocess.MultiProcessCollector(source)
    return generate_latest(_Exposition(source))  # type: ignore[arg-type]
