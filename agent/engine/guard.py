"""Distress gate: a binary check on the entry and on every answer.

Explicit risk (first-person intent to die or self-harm) and indirect risk (farewells, giving
things away, "better off without me") both fire. Dark-but-safe idiom ("this deadline is killing
me", "I murdered that song", a character dying in a game) must not: the patterns need first-person
intent or a leave-taking frame, and idioms are removed before matching.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_I = r"(?:i|i'm|i am|i've|i have|i'd|i'll|me|myself)"

EXPLICIT = [
    r"\b(?:kill|killing|hurt|hurting|harm|harming|cut|cutting|burn|burning) myself\b",
    r"\bsuicid\w*",
    r"\bself[- ]?harm\w*",
    r"\b(?:end|ending|take|taking) (?:my|my own) life\b",
    r"\bwant(?:ed)? to die\b",
    r"\bwish(?:ed)? (?:i was|i were|i'd) dead\b",
    r"\bwish i (?:could )?(?:just )?(?:not wake up|wasn't (?:here|alive)|didn't exist)\b",
    r"\b(?:don't|do not) want to (?:be alive|live|exist|be here anymore|wake up)\b",
    r"\bbetter off dead\b",
    r"\boverdos\w*",
    r"\bno reason to (?:live|go on|keep going)\b",
    r"\b(?:can't|cannot) go on\b",
]

INDIRECT = [
    r"\b(?:better off|happier|lighter) without me\b",
    r"\b(?:deserves?|deserve) (?:a life )?without me\b",
    r"\bwithout me dragging\b",
    r"\bwon't need (?:any of )?(?:it|them|this|these|anything) where i'm going\b",
    r"\bwhere i'm going\b",
    r"\b(?:wrote|writing|written|left) (?:a )?(?:note|notes|letter|letters) (?:for|to) (?:each|every|all|my)\b",
    r"\bnote for each of\b",
    r"\b(?:the )?last time i'll (?:write|see|be)\b",
    r"\bgoodbye,? (?:everyone|world|journal|all)\b",
    r"\b(?:gave|giving|given) away (?:my|all my|everything)\b",
    r"\bgave my [\w ]{1,40}\bto\b.{0,80}\bgave my\b",
    r"\bwhere the (?:insurance|will|life insurance)\b",
    r"\bwhen i'm gone\b",
    r"\bafter i'm gone\b",
    r"\b(?:easy|easier) for them afterwards\b",
    r"\bafterwards\b.{0,40}\b(?:them|everyone)\b",
    r"\b(?:i|i've) picked a date\b",
    r"\bnot (?:be|being) around (?:much longer|anymore|for long)\b",
    r"\bdisappear (?:forever|for good)\b",
    r"\bno point (?:in )?(?:living|going on|carrying on|anymore)\b",
    r"\b(?:stockpil\w+|saving up) (?:pills|tablets|meds)\b",
    r"\bcould give them that\b",
    r"\bjust finished\.\s*goodbye\b",
    r"\bend it all\b",
    r"\bput an end to (?:it|everything|myself)\b",
]

# Figures of speech that mention death or violence without risk; removed before matching.
IDIOMS = [
    r"\b(?:is|are|was|were|'s|'re) killing me\b",
    r"\bkilling it\b",
    r"\bnearly died of\b",
    r"\b(?:almost|nearly) died laughing\b",
    r"\bdied of (?:embarrassment|boredom|laughter|shame)\b",
    r"\bmurdered (?:\w+ )?(?:song|that|it|bohemian)\b",
    r"\bto die for\b",
    r"\bdeath saves?\b",
    r"\bkilling blow\b",
    r"\b(?!i\b)\w+ thought (?:i|i'd) (?:had )?(?:cut|hurt) myself\b",
]

_EXPLICIT = [re.compile(p, re.IGNORECASE) for p in EXPLICIT]
_INDIRECT = [re.compile(p, re.IGNORECASE | re.DOTALL) for p in INDIRECT]
_IDIOMS = [re.compile(p, re.IGNORECASE) for p in IDIOMS]

CRISIS_RESOURCES = [
    {"name": "988 Suicide & Crisis Lifeline (US)", "contact": "Call or text 988", "region": "US"},
    {"name": "Crisis Text Line", "contact": "Text HOME to 741741", "region": "US"},
    {
        "name": "Emergency services",
        "contact": "Call 911 (US) or your local emergency number",
        "region": "any",
    },
    {
        "name": "Find a helpline",
        "contact": "https://findahelpline.com",
        "region": "other countries",
    },
]
CRISIS_MESSAGE = (
    "What you wrote sounds like you might be in danger or thinking about ending your life. "
    "You deserve support right now from a person, not a questionnaire. Please reach out to one "
    "of these services, or to someone you trust, now."
)


@dataclass(frozen=True)
class GateResult:
    fired: bool
    level: str  # "none" | "explicit" | "indirect"
    rule: int  # index of the pattern that fired (logged instead of the text), -1 if none


def _clean(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    for pattern in _IDIOMS:
        text = pattern.sub(" ", text)
    return text


def distress_gate(text: str) -> GateResult:
    cleaned = _clean(text)
    for i, pattern in enumerate(_EXPLICIT):
        if pattern.search(cleaned):
            return GateResult(True, "explicit", i)
    for i, pattern in enumerate(_INDIRECT):
        if pattern.search(cleaned):
            return GateResult(True, "indirect", i)
    return GateResult(False, "none", -1)
