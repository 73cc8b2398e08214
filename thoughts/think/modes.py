"""Mode selection in three tiers (specs/002 "Heuristic Mode Selection"): an explicit hint, then
a trigger phrase, then keyword scoring. A tie or no keyword at all selects ``question``.

Matching is by substring of the lower-cased content, as in the original, so "bug" also counts
inside "debugging"; the trigger phrases and keyword sets are the spec's, in the spec's order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CONVERSATIONAL = ("question", "conclude")
TECHNICAL = ("debug", "build", "plan", "stuck")

TRIGGER_PHRASES: tuple[tuple[str, str], ...] = (
    ("debug time", "debug"),
    ("building time", "build"),
    ("plan time", "plan"),
    ("planning time", "plan"),
    ("i'm stuck", "stuck"),
    ("stuck", "stuck"),
    ("question time", "question"),
    ("wrap up", "conclude"),
    ("conclude", "conclude"),
)

KEYWORDS: dict[str, tuple[str, ...]] = {
    "debug": ("error", "bug", "stack trace", "failed", "exception", "panic"),
    "build": ("implement", "create", "add function", "build", "scaffold", "wire"),
    "plan": ("architecture", "design", "approach", "how should", "strategy", "trade-off"),
    "stuck": ("stuck", "unsure", "confused", "not sure", "blocked"),
}

# (injection_scale, significance) when the request leaves them out.
MODE_DEFAULTS: dict[str, tuple[int, float]] = {
    "debug": (3, 0.8),
    "build": (2, 0.6),
    "plan": (3, 0.7),
    "stuck": (3, 0.9),
    "question": (2, 0.5),
    "conclude": (2, 0.5),
}


@dataclass(frozen=True)
class ModeChoice:
    mode: str
    reason: str
    trigger_matched: str | None = None
    heuristics: dict[str, Any] | None = None
    hint_ignored: str | None = None

    @property
    def conversational(self) -> bool:
        return self.mode in CONVERSATIONAL

    @property
    def origin(self) -> str:
        return "human" if self.conversational else "tool"

    def telemetry(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "mode_selected": self.mode,
            "reason": self.reason,
            "trigger_matched": self.trigger_matched,
            "heuristics": self.heuristics,
        }
        if self.hint_ignored is not None:
            out["hint_ignored"] = self.hint_ignored
        return out


def _detect(content: str) -> ModeChoice:
    lower = content.lower()
    for phrase, mode in TRIGGER_PHRASES:
        if phrase in lower:
            return ModeChoice(mode, f"trigger phrase '{phrase}'", trigger_matched=phrase)
    scores = {mode: [k for k in words if k in lower] for mode, words in KEYWORDS.items()}
    best = max(len(found) for found in scores.values())
    if best == 0:
        return ModeChoice(
            "question", "no keyword matched; default", heuristics={"keywords": [], "score": 0}
        )
    leaders = [mode for mode, found in scores.items() if len(found) == best]
    if len(leaders) > 1:
        keywords = [k for mode in leaders for k in scores[mode]]
        return ModeChoice(
            "question",
            f"keyword tie between {', '.join(leaders)}; default",
            heuristics={"keywords": keywords, "score": best, "tied": leaders},
        )
    mode = leaders[0]
    return ModeChoice(
        mode, "heuristic keyword match", heuristics={"keywords": scores[mode], "score": best}
    )


def mode_select(*, content: str, hint: str | None) -> ModeChoice:
    if hint in MODE_DEFAULTS:
        return ModeChoice(hint, "hint specified")
    choice = _detect(content)
    if hint:
        # An unknown hint falls back to the heuristics, and says so.
        return ModeChoice(
            choice.mode, choice.reason, choice.trigger_matched, choice.heuristics, hint
        )
    return choice
