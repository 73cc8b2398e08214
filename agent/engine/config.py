"""The loop's stop rule and the policy's costs and limits (spec 004 §6), as values passed in:
the caller reads them from settings once per turn, and the loop and the policy read only this."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings


@dataclass(frozen=True)
class EngineConfig:
    tau_high: float  # stop when the leading node is this likely ...
    delta_gap: float  # ... and this far ahead of the runner-up
    epsilon_evi: float  # an action must be worth this many bits
    max_steps: int
    max_user_queries: int
    max_hypotheses: int
    lambda_cost: float  # score = EVI - lambda_cost * cost
    cost_askuser: float
    cost_internal: float
    merge_radius: float  # cosine at which two statements are near-duplicates
    cluster_spectral: bool
    policy: str  # "eig", or "random" (a random AskUser: the evaluation baseline)
    evidence_requests: str = "after_answer"  # "always", "after_answer" or "off"

    @classmethod
    def from_settings(cls) -> EngineConfig:
        return cls(
            tau_high=settings.TAU_HIGH,
            delta_gap=settings.DELTA_GAP,
            epsilon_evi=settings.EPSILON_EVI,
            max_steps=settings.MAX_STEPS,
            max_user_queries=settings.MAX_USER_QUERIES,
            max_hypotheses=settings.MAX_HYPOTHESES,
            lambda_cost=settings.LAMBDA_COST,
            cost_askuser=settings.AGENT_COST_ASKUSER,
            cost_internal=settings.AGENT_COST_INTERNAL,
            merge_radius=settings.MERGE_RADIUS,
            cluster_spectral=settings.AGENT_ENABLE_CLUSTER_SPECTRAL,
            policy=settings.AGENT_POLICY,
            evidence_requests=settings.AGENT_EVIDENCE_REQUESTS,
        )
