"""Crux archetypes: the salience cues that seed beliefs, the crux statement a node carries, the
first-person phrase a question offers, and the observation models of the internal actions.

Crux statements are deliberately generic (no names from the entry): a confirmed crux should say
*what kind* of knot this is, and the entry's details belong to the writer, not to a template.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Archetype:
    key: str
    crux: str
    option: str  # first-person, short, neutral; what a quick option reads like
    cues: tuple[str, ...]  # regexes, matched case-insensitively on word boundaries
    persistent: float  # P(persistent pattern | this crux), for CounterfactualTest
    # P(the entry mentions this kind of context | this crux) for EvidenceRequest kinds.
    context: dict[str, float] = field(default_factory=dict)


ARCHETYPES: tuple[Archetype, ...] = (
    Archetype(
        "fear_of_failure",
        "The writer is avoiding the attempt because trying and still falling short would make "
        "the failure real and unbearable.",
        "If I try and still fall short, the failure becomes real",
        (
            r"fail\w*",
            r"not good enough",
            r"what if i",
            r"audition\w*",
            r"exam\w*",
            r"test",
            r"pull(ed)? out",
            r"skip\w*",
            r"excuse",
            r"not trying",
            r"haven'?t tried",
            r"risk",
            r"compet\w+",
            r"give up",
            r"chicken\w* out",
            r"scared",
            r"afraid",
            r"deadline",
        ),
        0.6,
        {"timeline": 0.5, "constraints": 0.3, "goals": 0.8, "norms": 0.3},
    ),
    Archetype(
        "need_for_approval",
        "The writer needs other people's approval and acknowledgement before they can feel "
        "their own choice or effort was good enough.",
        "I need others to approve before it feels good enough",
        (
            r"what (they|people|others|everyone) (think|thought|say|said)",
            r"approv\w+",
            r"acknowledg\w+",
            r"review\w*",
            r"likes?",
            r"compliment\w*",
            r"impress\w*",
            r"thank\w*",
            r"praise\w*",
            r"noticed?",
            r"told me",
            r"in front of everyone",
            r"opinion\w*",
            r"judg\w+",
            r"validat\w+",
            r"proud",
            r"recogni[sz]\w+",
            r"comment\w*",
        ),
        0.6,
        {"timeline": 0.4, "constraints": 0.2, "goals": 0.4, "norms": 0.7},
    ),
    Archetype(
        "boundaries",
        "The writer keeps giving time and help to others because they cannot bring themselves "
        "to set limits or say no.",
        "I keep giving my time because I can't say no",
        (
            r"say no",
            r"said yes",
            r"can'?t refuse",
            r"favou?rs?",
            r"for free",
            r"late calls?",
            r"called again",
            r"always ask\w*",
            r"on call",
            r"keep(s)? asking",
            r"boundar\w+",
            r"limits?",
            r"answer(ed|ing)? (the|her|his|my) (phone|calls?|texts?|messages?)",
            r"drop everything",
            r"again\b",
            r"every time",
            r"needs? me",
            r"help(ing)?",
            r"text(ed|s)?",
            r"midnight",
            r"sorry",
        ),
        0.7,
        {"timeline": 0.6, "constraints": 0.5, "goals": 0.2, "norms": 0.6},
    ),
    Archetype(
        "grief_loss",
        "The writer is grieving someone or something they lost, and the gaps it left keep "
        "surfacing.",
        "I'm grieving what I lost, and the gap keeps showing",
        (
            r"died",
            r"death",
            r"funeral",
            r"grave",
            r"miss(ed|ing)?",
            r"gone",
            r"passed",
            r"used to",
            r"first .* without",
            r"memor\w+",
            r"widow\w*",
            r"loss",
            r"lost",
            r"left behind",
            r"mourn\w*",
            r"anniversary",
            r"ashes",
            r"old (life|city|house|home)",
        ),
        0.4,
        {"timeline": 0.9, "constraints": 0.2, "goals": 0.2, "norms": 0.3},
    ),
    Archetype(
        "burnout",
        "The writer has been running on empty for too long with no real rest, and the "
        "exhaustion has drained everything else.",
        "I've run on empty too long, with no real rest",
        (
            r"exhaust\w+",
            r"tired",
            r"drained?",
            r"burn\w* out",
            r"burnout",
            r"no (rest|break)",
            r"shifts?",
            r"overtime",
            r"workload",
            r"two jobs",
            r"sleep\w*",
            r"fumes",
            r"worn",
            r"hours",
            r"weekends?",
            r"emails?",
            r"can'?t think",
            r"numb",
            r"\d+[- ]hour",
        ),
        0.3,
        {"timeline": 0.6, "constraints": 0.9, "goals": 0.2, "norms": 0.3},
    ),
    Archetype(
        "career_identity",
        "The writer's sense of who they are was built on a role or career that has changed, "
        "and the new one doesn't feel like them.",
        "My sense of who I am was built on a role that changed",
        (
            r"career",
            r"title",
            r"job",
            r"who i am",
            r"what do you do",
            r"retir\w+",
            r"profession\w*",
            r"identity",
            r"used to be a",
            r"role",
            r"laid off",
            r"redundan\w+",
            r"new (job|role)",
            r"former",
            r"no longer",
            r"calling",
            r"nurse|nursing|teacher|doctor",
        ),
        0.6,
        {"timeline": 0.7, "constraints": 0.3, "goals": 0.6, "norms": 0.4},
    ),
    Archetype(
        "relationship_conflict",
        "The writer and someone close keep having the same unresolved fight, and the real "
        "issue between them is never repaired.",
        "We keep having the same fight and never repair it",
        (
            r"fight\w*",
            r"argu\w+",
            r"row",
            r"snapp\w+",
            r"slammed",
            r"silent treatment",
            r"cold",
            r"same (fight|argument)",
            r"blow ?up",
            r"yell\w*",
            r"shout\w*",
            r"apolog\w+",
            r"we (don'?t|never) talk",
            r"tension",
            r"resent",
            r"partner|husband|wife|boyfriend|"
            r"girlfriend",
        ),
        0.5,
        {"timeline": 0.6, "constraints": 0.3, "goals": 0.3, "norms": 0.5},
    ),
    Archetype(
        "low_self_worth",
        "The writer believes they don't deserve the good things or people in their life, so "
        "anything good feels borrowed.",
        "I don't feel I deserve the good things I have",
        (
            r"deserve\w*",
            r"not worth",
            r"worthless",
            r"fraud",
            r"impostor",
            r"someone like me",
            r"why would (they|she|he|anyone)",
            r"too good for",
            r"borrowed",
            r"taken back",
            r"luck\w*",
            r"burden",
            r"useful",
            r"earn(ed)? (my|a) place",
            r"not enough",
        ),
        0.85,
        {"timeline": 0.6, "constraints": 0.2, "goals": 0.3, "norms": 0.5},
    ),
    Archetype(
        "control_uncertainty",
        "The writer can't stand not knowing how things will turn out, and keeps trying to "
        "control what can't be controlled.",
        "I can't stand not knowing how it will turn out",
        (
            r"waiting",
            r"limbo",
            r"uncertain\w*",
            r"not knowing",
            r"what if",
            r"plan\w*",
            r"decision",
            r"hang\w*",
            r"control\w*",
            r"check(ing)?",
            r"refresh\w*",
            r"any day",
            r"can'?t (do|change) anything",
            r"out of my hands",
            r"predict\w*",
        ),
        0.5,
        {"timeline": 0.8, "constraints": 0.6, "goals": 0.4, "norms": 0.2},
    ),
    Archetype(
        "loneliness",
        "The writer is alone day to day, with no one close to share life with, and feels cut "
        "off from people.",
        "I'm alone day to day, with no one close to share life with",
        (
            r"alone",
            r"lonely",
            r"loneliness",
            r"no one",
            r"nobody",
            r"by myself",
            r"empty",
            r"quiet",
            r"isolat\w+",
            r"friends?",
            r"no one to",
            r"eat(ing)? alone",
            r"talk to",
            r"moved",
            r"new (town|city)",
            r"silence",
            r"weekend",
        ),
        0.5,
        {"timeline": 0.5, "constraints": 0.4, "goals": 0.3, "norms": 0.2},
    ),
    Archetype(
        "perfectionism",
        "The writer can't accept anything short of flawless, so they keep redoing work that "
        "is already good enough.",
        "Nothing is acceptable unless it's flawless, so I keep redoing it",
        (
            r"perfect\w*",
            r"flaw\w*",
            r"mistake\w*",
            r"redo\w*",
            r"re-?edit\w*",
            r"rewr\w+",
            r"again and again",
            r"polish\w*",
            r"tiny",
            r"nobody (would|will) notice",
            r"start(ed)? over",
            r"delet\w+",
            r"practis\w+|practic\w+",
            r"wrong note",
            r"not right",
            r"one more",
        ),
        0.8,
        {"timeline": 0.5, "constraints": 0.4, "goals": 0.6, "norms": 0.7},
    ),
    Archetype(
        "resentment_fairness",
        "The writer feels treated unfairly: others got credit or reward they didn't earn "
        "while the writer's own contribution went unrecognised.",
        "It's unfair: others got the credit or reward I earned",
        (
            r"unfair",
            r"fair",
            r"credit\w*",
            r"paid",
            r"bonus\w*",
            r"while (we|i)",
            r"got (a|the)",
            r"did nothing",
            r"did little",
            r"favou?rit\w+",
            r"resent\w*",
            r"bitter",
            r"why (do|does|did) (they|he|she)",
            r"nobody thanked",
            r"same work",
            r"years",
        ),
        0.6,
        {"timeline": 0.6, "constraints": 0.3, "goals": 0.2, "norms": 0.8},
    ),
)

BY_KEY = {a.key: a for a in ARCHETYPES}
# What a writer reads when a question says which themes it tells apart (the keys are ids).
THEMES = {
    "fear_of_failure": "fear of failing",
    "need_for_approval": "needing approval",
    "boundaries": "saying no",
    "grief_loss": "loss",
    "burnout": "running on empty",
    "career_identity": "who you are at work",
    "relationship_conflict": "conflict with someone close",
    "low_self_worth": "self-worth",
    "control_uncertainty": "not being in control",
    "loneliness": "loneliness",
    "perfectionism": "perfectionism",
    "resentment_fairness": "unfairness",
}
_COMPILED = {
    a.key: [re.compile(rf"\b(?:{cue})\b", re.IGNORECASE) for cue in a.cues] for a in ARCHETYPES
}


def cue_hits(text: str) -> dict[str, list[str]]:
    """Matched cue snippets per archetype (each cue counted once), in cue order."""
    hits: dict[str, list[str]] = {}
    for key, patterns in _COMPILED.items():
        found = []
        for pattern in patterns:
            match = pattern.search(text)
            if match:
                found.append(match.group(0))
        hits[key] = found
    return hits


def cue_scores(text: str) -> dict[str, float]:
    """Salience of each archetype in the text: matched cues with diminishing returns."""
    return {
        key: sum(1.0 / (1 + i * 0.5) for i in range(len(found)))
        for key, found in cue_hits(text).items()
    }
