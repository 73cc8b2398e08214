"""Layer 1 of the distress detector: explicit first-person statements of intent to die or to
self-harm, by pattern. They are unambiguous, so they always mean ``risk``.

Figures of speech that mention death or violence without risk ("this deadline is killing me",
"I murdered that song", a character's death saves) are removed before matching, and the
patterns need the writer's own intent, so someone else's words ("Lou thought I'd cut myself")
do not count. Indirect warning signs are not listed here: they are said in endless ways, and
the semantic layer (:mod:`agent.safety.semantic`) reads them by meaning.
"""

from __future__ import annotations

import re

SELF_HARM = [
    r"\b(?:hurt|hurting|harm|harming|cut|cutting|burn|burning) myself\b",
    r"\bself[- ]?harm\w*",
]
EXPLICIT = [
    r"\bkill(?:ing)? myself\b",
    r"\bsuicid\w*",
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

# Removed before matching: idioms, and someone else supposing the writer hurt themselves.
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

_PATTERNS = [("explicit", re.compile(p, re.IGNORECASE)) for p in EXPLICIT] + [
    ("self_harm", re.compile(p, re.IGNORECASE)) for p in SELF_HARM
]
_IDIOMS = [re.compile(p, re.IGNORECASE) for p in IDIOMS]


def normalise_quotes(text: str) -> str:
    return text.replace("\u2019", "'").replace("\u2018", "'")


def explicit_match(text: str) -> str | None:
    """The category ("explicit" or "self_harm") when ``text`` states, in the first person, an
    intent to die or to self-harm; None otherwise."""
    cleaned = normalise_quotes(text)
    for pattern in _IDIOMS:
        cleaned = pattern.sub(" ", cleaned)
    return next((category for category, p in _PATTERNS if p.search(cleaned)), None)
