"""Question bank (contrastive templates per crux archetype), hash-based cooldown and the linter
that rejects leading wording before any question reaches a writer."""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass

from django.conf import settings

NOT_SURE = "Not sure / something else"

# Contrastive stems: each offers the archetypes' own phrases side by side, never a yes/no.
PAIR_TEMPLATES: tuple[tuple[str, str], ...] = (
    ("pair-closer", "Which of these is closer to what sits underneath this for you?"),
    ("pair-weight", "If you had to pick one, which weighs on you more here?"),
    ("pair-true", "Which of these feels more true right now?"),
    ("pair-heart", "Reading this back, which is nearer the heart of it?"),
)
TRIAD_TEMPLATES: tuple[tuple[str, str], ...] = (
    ("triad-closest", "Which one of these comes closest to what is going on?"),
    ("triad-pull", "Which of these pulls at you most in what you wrote?"),
)


@dataclass(frozen=True)
class Lint:
    ok: bool
    problems: tuple[str, ...]


_NEG_INTERROGATIVE = re.compile(
    r"^\s*(?:don't|doesn't|didn't|isn't|aren't|wasn't|weren't|won't|wouldn't|shouldn't|"
    r"couldn't|can't|haven't|hasn't)\b",
    re.IGNORECASE,
)
_TAG = re.compile(
    r",\s*(?:isn't it|aren't you|don't you|didn't you|wasn't it|won't you|wouldn't you|"
    r"haven't you|right|correct|yes|no|is it|do you|am i right)\s*\?\s*$",
    re.IGNORECASE,
)
_PRESUPPOSITION = re.compile(
    r"\b(?:why do you (?:always|keep|never)|when did you (?:stop|start|realise|realize)|"
    r"how (?:much|badly) (?:does|did|do) .{1,40} (?:hurt|bother|upset)|since you (?:are|were|feel)|"
    r"given that you|how long have you (?:been|felt)|what made you (?:fail|give up|ruin)|"
    r"why can't you|why are you so)\b",
    re.IGNORECASE,
)
_LABELS = re.compile(
    r"\b(?:depress\w*|anxiety disorder|disorder\w*|narcissis\w*|codependen\w*|ptsd|trauma\w*|"
    r"bipolar|ocd|adhd|borderline|toxic|gaslight\w*|abandonment issues|neurotic|pathologic\w*)\b",
    re.IGNORECASE,
)
_YES_NO_STEM = re.compile(
    r"^\s*(?:do|does|did|is|are|was|were|have|has|can|could|would|will|should|am)\b", re.IGNORECASE
)
_LOADED = re.compile(
    r"\b(?:obviously|clearly|just|only|simply|really|healthy|unhealthy|mature|immature|"
    r"selfish|irrational|silly|right thing)\b",
    re.IGNORECASE,
)


def lint(question: str, options: list[str] | None, *, quoting: str = "") -> Lint:
    """Reject leading wording: negative interrogatives, tag questions, presuppositions,
    diagnostic labels, one-sided yes/no questions and unequal (or loaded) options.
    ``quoting``: the entry the options quote. A loaded or diagnostic word of an option that the
    writer wrote themselves is their word repeated back, not the agent's wording."""
    problems = []

    def agents(pattern: re.Pattern[str], option: str) -> bool:
        return any(
            not re.search(rf"\b{re.escape(m.group(0))}\b", quoting, re.IGNORECASE)
            for m in pattern.finditer(option)
        )

    if _NEG_INTERROGATIVE.search(question):
        problems.append("negative_interrogative")
    if _TAG.search(question):
        problems.append("tag_question")
    if _PRESUPPOSITION.search(question):
        problems.append("presupposition")
    if _LABELS.search(question) or any(agents(_LABELS, o) for o in options or []):
        problems.append("diagnostic_label")
    substantive = [o for o in options or [] if o != NOT_SURE]
    yes_no = {o.strip().lower().rstrip(".!") for o in substantive} <= {"yes", "no", "y", "n"}
    if _YES_NO_STEM.search(question) and " or " not in question.lower() and yes_no:
        problems.append("one_sided_yes_no")
    if substantive and not yes_no:
        lengths = [len(o.split()) for o in substantive]
        if max(lengths) > 2.5 * max(1, min(lengths)) or any(
            agents(_LOADED, o) for o in substantive
        ):
            problems.append("unequal_options")
    if options is not None and not 2 <= len(options) <= 4:
        problems.append("option_count")
    return Lint(not problems, tuple(problems))


def question_hash(target_keys: list[str]) -> str:
    """Cooldown key: the same contrast is never asked twice, whatever the wording."""
    raw = "|".join(sorted(target_keys))
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def text_hash(text: str) -> str:
    """What logs carry instead of text: keyed with the server's secret, so that whoever reads
    the logs can still tell two turns of one entry apart from others, but cannot confirm a
    guessed entry by hashing it (a plain sha256 let them)."""
    key = hmac.new(settings.AGENT_STATE_SECRET.encode(), b"agent-log-hash", hashlib.sha256)
    return hmac.new(key.digest(), text.encode(), hashlib.sha256).hexdigest()[:16]
