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
    r"\bkill(?:ed|ing|s)? (?:myself|myslef|my self)\b",
    r"\b(?:hang|hanging|hanged|shoot|shooting|shot|drown|drowning|poison|poisoning) myself\b",
    r"\b(?:unalive|off) myself\b",
    r"\bkms\b",
    r"\bsuicid\w*",
    r"\b(?:end|ending|take|taking|finish|finishing) (?:my|my own) life\b",
    r"\bwant(?:ed)? to (?:die|be dead)\b",
    r"\b(?:plan|planning|planned|try|trying|tried|intend|intending|decided|chose) to (?:die|be "
    r"dead|end it(?: all)?|jump|kill myself)\b",
    r"\bending it all\b|\bend it all\b",
    r"\b(?:thinking|think|thought|thoughts) (?:about|of) (?:dying|killing myself|ending my life|"
    r"ending it(?: all)?|hanging myself|jumping (?:off|in front))\b",
    r"\b(?:i|i've|i have) attempted\b|\battempted (?:tonight|last night|again|today)\b",
    r"\bhope i (?:don't|dont|do not|won't|wont) wake up\b",
    r"\bso (?:that )?i (?:don't|dont|won't|wont|never) wake up\b",
    r"\b(?:hate|can't stand|cant stand|cannot stand|sick of|tired of) being alive\b",
    r"\btake all (?:my|the|of my) (?:pills|tablets|meds|medication)\b",
    r"\buse (?:it|them) on myself\b",
    r"\bdone (?:living|with living|with being alive)\b",
    r"\bwish(?:ed)? (?:i was|i were|i'd|id) dead\b",
    r"\bwish i (?:could )?(?:just )?(?:not wake up|wasn't (?:here|alive)|didn't exist)\b",
    r"\b(?:don't|dont|do not) want to (?:be alive|live|exist|be here anymore|wake up)\b",
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


def without_idioms(text: str) -> str:
    """``text`` with its figures of speech about death or harm blanked (the text itself when it
    has none, so a reader of the text can reuse what was read of it)."""
    cleaned = normalise_quotes(text)
    for pattern in _IDIOMS:
        cleaned = pattern.sub(" ", cleaned)
    return text if cleaned == normalise_quotes(text) else cleaned


def explicit_match(text: str) -> str | None:
    """The category ("explicit" or "self_harm") when ``text`` states, in the first person, an
    intent to die or to self-harm; None otherwise."""
    cleaned = normalise_quotes(without_idioms(text))
    return next((category for category, p in _PATTERNS if p.search(cleaned)), None)
