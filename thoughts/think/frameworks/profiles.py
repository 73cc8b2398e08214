"""Submode profiles (specs/002): which frameworks run with what weight, and the injection
threshold delta applied when ``THINK_SUBMODE_RETRIEVAL`` is on."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_SUBMODE = "problem_solving"


@dataclass(frozen=True)
class Profile:
    name: str
    weights: dict[str, float]
    threshold_delta: float
    favor: str


PROFILES = {
    "sarcastic": Profile(
        "sarcastic", {"ooda": 0.6, "socratic": 0.3, "lateral": 0.1}, -0.05, "contrarian"
    ),
    "philosophical": Profile(
        "philosophical",
        {"first_principles": 0.4, "socratic": 0.4, "lateral": 0.2},
        0.0,
        "abstract",
    ),
    "empathetic": Profile(
        "empathetic",
        {"root_cause": 0.5, "socratic": 0.3, "first_principles": 0.2},
        0.02,
        "emotional",
    ),
    "problem_solving": Profile(
        "problem_solving",
        {"ooda": 0.4, "root_cause": 0.3, "first_principles": 0.3},
        0.0,
        "solution",
    ),
}


def profile_for(submode: str | None) -> Profile:
    """Unknown or missing submodes get the problem-solving profile, as in the original."""
    return PROFILES.get(submode or DEFAULT_SUBMODE, PROFILES[DEFAULT_SUBMODE])
