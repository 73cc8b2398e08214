"""v1 Reflections: four framework perspectives and a prophecy. A chat provider (the inner
voice's chain) writes them when one answers; otherwise a deterministic composer grounded in the
entry's own salient phrases does, and says so in ``provider``."""

from __future__ import annotations

import json
import logging
import re

from pydantic import ValidationError

from agent.engine.archetypes import BY_KEY, cue_hits, cue_scores
from agent.safety import assess, notice, refuse_at_risk
from agent.schemas import JournalEntry, Perspective, Perspectives, Prophecy, Reflection
from legacymind.providers import chat

logger = logging.getLogger("agent.reflections")
OFFLINE = "offline-composer"

SYSTEM = (
    "You write reflections on a journal entry from four frameworks: buddhism, stoicism, "
    "existentialism, neoadlerianism. Answer with ONE JSON object only, no prose, shaped as "
    '{"perspectives": {"items": [{"framework", "other_framework_name", "core_principle_invoked", '
    '"challenge_framing", "practical_experiment", "potential_trap", "key_metaphor"}]}, '
    '"prophecy": {"agreement_scorecard": [{"framework_a", "framework_b", "stance": '
    '"agree|diverge|nuanced", "notes"}], "tension_summary": [{"frameworks": [..2+..], '
    '"explanation"}], "synthesis", "what_is_lost_by_blending": [str]}}. Ground every field in '
    "the writer's own words; no diagnoses."
)

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")


def salient_phrases(text: str, k: int = 3) -> list[str]:
    """The entry's sentences that carry the most crux cues, shortened to ≤ 14 words, in order."""
    sentences = [s.strip() for s in _SENTENCE.findall(text) if len(s.split()) >= 3]
    scored = []
    for i, sentence in enumerate(sentences):
        hits = sum(len(v) for v in cue_hits(sentence).values())
        scored.append((hits, -i, sentence))
    best = sorted(scored, reverse=True)[:k]
    picked = [s for _, _, s in sorted(best, key=lambda t: -t[1])]
    return [" ".join(s.split()[:14]).rstrip(",;:") for s in picked] or [text[:80]]


def _theme(text: str, focus: str | None) -> tuple[str, str]:
    scores = cue_scores(text)
    key = max(sorted(scores), key=lambda k: scores[k])
    theme = focus or BY_KEY[key].crux
    return key.replace("_", " "), theme[0].lower() + theme[1:].rstrip(".")


def compose_offline(entry: JournalEntry, *, focus: str | None = None) -> Reflection:
    """Deterministic: the same entry gives the same reflection."""
    phrases = salient_phrases(entry.text)
    p1, p2 = phrases[0], phrases[-1]
    label, theme = _theme(entry.text, focus)
    return Reflection(
        journal_entry=entry,
        perspectives=Perspectives(items=_perspectives(p1, p2, theme)),
        prophecy=_prophecy(p2, label, theme),
        provider=OFFLINE,
    )


def _perspectives(p1: str, p2: str, theme: str) -> list[Perspective]:
    """The four frameworks' readings, quoting the entry's first and last salient phrases."""
    return [
        Perspective(
            framework="buddhism",
            core_principle_invoked="Suffering grows from clinging; craving an outcome tightens it.",
            challenge_framing=f'Where is the clinging in "{p1}"? Notice it before changing it.',
            practical_experiment="Three times a day, name the feeling behind this in one word "
            "and take three breaths without acting on it.",
            potential_trap="Using acceptance to avoid a decision that needs making.",
            key_metaphor="A fist around sand: the tighter the grip, the more runs out.",
        ),
        Perspective(
            framework="stoicism",
            core_principle_invoked="Separate what is up to you from what is not.",
            challenge_framing=f'In "{p2}", which part is yours to act on, and which belongs to '
            "others or to chance?",
            practical_experiment="Write two columns tonight: mine / not mine. Act on one item "
            "in the first column tomorrow.",
            potential_trap="Cold detachment that mistakes suppression for calm.",
            key_metaphor="The archer controls the aim, not the wind.",
        ),
        Perspective(
            framework="existentialism",
            core_principle_invoked="You are your choices; freedom comes with responsibility.",
            challenge_framing=f"If the knot here is that {theme}, what would you choose if no "
            "one were grading it?",
            practical_experiment="Make one small choice this week that you would make even if "
            "the outcome went badly, and note how it feels to own it.",
            potential_trap="Treating every choice as ultimate and freezing.",
            key_metaphor="A blank page that only fills when you write on it.",
        ),
        Perspective(
            framework="neoadlerianism",
            core_principle_invoked="Behaviour serves a goal; courage and social interest heal.",
            challenge_framing=f'What does "{p1}" protect you from, and what task of life is it '
            "helping you avoid?",
            practical_experiment="Do one act of contribution for someone else without being "
            "asked, and one task you have been postponing.",
            potential_trap="Reading every feeling as strategy and dismissing real pain.",
            key_metaphor="A detour sign you put up yourself.",
        ),
    ]


# Where the four frameworks agree and pull apart, and what blending them loses: the same for
# every entry.
AGREEMENT_SCORECARD: list[dict[str, str]] = [
    {
        "framework_a": "buddhism",
        "framework_b": "stoicism",
        "stance": "agree",
        "notes": "Both loosen the grip on outcomes you cannot command.",
    },
    {
        "framework_a": "stoicism",
        "framework_b": "existentialism",
        "stance": "diverge",
        "notes": "Stoics accept a given order; existentialists say you make the meaning.",
    },
    {
        "framework_a": "existentialism",
        "framework_b": "neoadlerianism",
        "stance": "nuanced",
        "notes": "Both centre choice; Adler adds that choices serve goals among others.",
    },
    {
        "framework_a": "buddhism",
        "framework_b": "neoadlerianism",
        "stance": "nuanced",
        "notes": "Compassion and social interest meet; the self is treated differently.",
    },
]
TENSION_SUMMARY: list[dict[str, object]] = [
    {
        "frameworks": ["buddhism", "existentialism"],
        "explanation": "Letting go of the self versus asserting it through choice.",
    },
    {
        "frameworks": ["stoicism", "neoadlerianism"],
        "explanation": "Inner discipline versus courage found in belonging and contribution.",
    },
]
LOST_BY_BLENDING = [
    "Buddhism's radical questioning of the self that is suffering.",
    "Existentialism's insistence that no framework can choose for you.",
    "The Stoic and Adlerian demand to act, softened into mere reflection.",
]


def _prophecy(p2: str, label: str, theme: str) -> Prophecy:
    """The frameworks read together: the fixed scorecard and tensions, and a synthesis on the
    entry's theme."""
    return Prophecy.model_validate(
        dict(
            agreement_scorecard=AGREEMENT_SCORECARD,
            tension_summary=TENSION_SUMMARY,
            synthesis=f"Read together, the frameworks point at {label}: {theme}. Start with what is "
            f'yours to do about "{p2}", hold the outcome loosely, and make one choice you would own '
            "either way.",
            what_is_lost_by_blending=LOST_BY_BLENDING,
        )
    )


def _json_object(text: str) -> dict:
    text = re.sub(r"^```(?:json)?|```$", "", text.strip(), flags=re.MULTILINE).strip()
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON object")
    depth = 0
    for i, ch in enumerate(text[start:], start):
        depth += ch == "{"
        depth -= ch == "}"
        if depth == 0:
            return json.loads(text[start : i + 1])
    raise ValueError("unbalanced JSON object")


def reflection_create(*, entry: JournalEntry, focus: str | None = None) -> Reflection:
    """Refused at risk (crisis resources instead); at concern the reflection carries them."""
    safety = assess([entry.text], where="reflection")
    refuse_at_risk(safety, field="journal_entry.text", what="entry")
    reflection = _reflection(entry, focus=focus)
    reflection.safety = notice(safety)
    return reflection


def _reflection(entry: JournalEntry, *, focus: str | None) -> Reflection:
    """Chat provider first; the offline composer when none answers or its answer is invalid."""
    prompt = f"Journal entry:\n{entry.text}\n"
    if focus:
        prompt += f"\nThe writer confirmed this crux: {focus}\n"
    try:
        answer = chat.complete(prompt, system=SYSTEM, temperature=0.4)
    except chat.ChatError as exc:
        logger.info("reflection: no chat provider (%s); offline composer", type(exc).__name__)
        return compose_offline(entry, focus=focus)
    try:
        data = _json_object(answer.text)
        return Reflection(
            journal_entry=entry,
            perspectives=data["perspectives"],
            prophecy=data["prophecy"],
            provider=answer.provider,
        )
    except (ValueError, KeyError, TypeError, ValidationError) as exc:
        logger.warning(
            "reflection: %s answer unusable (%s); offline composer",
            answer.provider,
            type(exc).__name__,
        )
        return compose_offline(entry, focus=focus)
