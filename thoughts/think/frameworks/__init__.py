"""Cognitive frameworks: seven deterministic analyzers and four submode profiles that weight
them. ``framework_analyze`` runs the profile's frameworks, adds systems and dialectical
thinking when the text calls for them, and merges the results by weight."""

from __future__ import annotations

from math import ceil
from typing import Any

from thoughts.think.frameworks.analyzers import FRAMEWORKS, OPPOSITION, RELATION
from thoughts.think.frameworks.profiles import PROFILES, Profile, profile_for
from thoughts.think.frameworks.text import markers

MERGED_MAX = 5
EXTRA_WEIGHT = 0.15  # systems / dialectical, when the text shows relations or a tension

__all__ = ["FRAMEWORKS", "PROFILES", "Profile", "framework_analyze", "profile_for"]


def _weights(text: str, profile: Profile) -> tuple[dict[str, float], dict[str, str]]:
    weights = dict(profile.weights)
    added: dict[str, str] = {}
    if markers(text, RELATION):
        weights["systems"] = EXTRA_WEIGHT
        added["systems"] = "the text states relations between parts"
    if markers(text, OPPOSITION):
        weights["dialectical"] = EXTRA_WEIGHT
        added["dialectical"] = "the text sets two positions against each other"
    total = sum(weights.values())
    return {name: round(w / total, 4) for name, w in weights.items()}, added


def _merge(results: dict[str, dict[str, Any]], weights: dict[str, float], key: str) -> list[str]:
    merged: list[str] = []
    for name in sorted(weights, key=lambda n: (-weights[n], n)):
        share = max(1, ceil(weights[name] * MERGED_MAX))
        for item in results[name][key][:share]:
            if item not in merged:
                merged.append(item)
    return merged[:MERGED_MAX]


def framework_analyze(*, text: str, submode: str | None) -> dict[str, Any]:
    profile = profile_for(submode)
    weights, added = _weights(text, profile)
    results = {
        name: {"weight": weights[name], **FRAMEWORKS[name].analyze(text).as_dict()}
        for name in weights
    }
    return {
        "submode": profile.name,
        "favor": profile.favor,
        "weights": weights,
        "added": added,
        "frameworks": results,
        "insights": _merge(results, weights, "insights"),
        "questions": _merge(results, weights, "questions"),
        "next_steps": _merge(results, weights, "next_steps"),
    }
