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

# The writer's own self: journal writers address themselves as "you" as often as "I".
# Common typing slips of "myself" count as the word (a writer in distress types fast).
_SELF = (
    r"(?:myself|myslef|mysefl|myelf|mysel|mself|meself|masel|masell|my self|yourself|your self|"
    r"urself|yersel|yersell)"
)
_OWN = r"(?:my|your)(?: own)?"
# Phrasal idioms and accidents are not self-harm: "cut myself down" (belittling), "cut myself
# off" (withdrawal, read by meaning), "burn myself out", "hurt myself at the gym".
_NOT_HARM = (
    r"(?! (?:down|off|short|some slack|a (?:slice|piece|break)|out|free|loose|back|up|at (?:the|"
    r"work|football|training)|playing|lifting|running|falling|while|during)\b)"
)
SELF_HARM = [
    rf"\b(?:hurt|hurting) (?:myself|myslef|my self)\b{_NOT_HARM}",
    rf"\b(?:harm|harming|cut|cutting|burn|burning) {_SELF}\b{_NOT_HARM}",
]
# Where a word could name an ordinary life ("I don't want to live in London"), what follows
# "live" is a place, a person or a manner: that is not a wish to die.
_LIVE = (
    r"live(?!\s+(?:with|in|at|near|like|there|here|on|by|so|together|abroad|alone|next|under|"
    r"out|off|far|close|closer|somewhere|anywhere|without)\b)"
)
EXPLICIT = [
    rf"\bkill?(?:ed|ing|in|s)? {_SELF}\b",
    # Slang and regional verbs for killing oneself; "top myself up" is phone credit.
    rf"\b(?:top|topping|toppin|topped|neck|necking|neckin|necked|end|ending|endin|ended) {_SELF}\b"
    r"(?! up\b)",
    rf"\b(?:do|doing|did|done) {_SELF} in\b|\bdo away with {_SELF}\b",
    r"\b(?:eat|eating|ate|eaten|eats) (?:my|a|the) (?:own )?(?:gun|bullet|shotgun|pistol|"
    r"rifle)\b",
    r"\bblow(?:ing|n)? my (?:own )?brains out\b",
    r"\bbullet (?:in|into|through) my (?:head|brain|skull)\b",
    # A weapon held to one's own body.
    r"\b(?:gun|rifle|pistol|shotgun|barrel|muzzle) (?:under|to|against|in|into) my "
    r"(?:chin|head|mouth|temple)\b",
    # Misspellings of "suicide".
    r"\b(?:sucid|suicd|suiced|suisid|suicud|sucud|su1cid|sewerslid|sewer slid)\w*",
    rf"\b(?:hang|hanging|hanged|shoot|shooting|shot|drown|drowning|poison|poisoning) {_SELF}\b",
    rf"\b(?:unalive|off) {_SELF}\b",
    r"\bkms\b",
    rf"\b(?:end|ends|ending|ended|take|takes|taking|took|taken|finish|finishing) {_OWN} life\b",
    # "to" as typed in a hurry or in Scots ("too", "tae"); "deid" is Scots for dead.
    r"\b(?:want|wanted|wanting|wantin|wanna|wnat|wan|watn|waant) (?:(?:to|too|tae|ta) )?(?:die|dee|"
    r"be dead|be deid)\b",
    # Wishing or praying for one's own death ("I wish to die", "pray to die", "the wish to die").
    # The writer's own: after "I", "you", "my"/"the" (the noun), or opening a sentence or item.
    r"(?:^|(?<=[.!?:;\n*\u2022-])|\b(?:i|you|ye|i've|ive|i have|you've|my|the)\b)\s*(?:(?:only|just|"
    r"still|really|often|always|sometimes|quietly|honestly) )*(?:wish|wishes|wished|wishing|wishin|"
    r"pray|prays|prayed|praying|long|longing) (?:only |just |really |so much |every day )?"
    r"(?:to|tae|too) (?:die|be dead|be deid)\b",
    r"\bwish(?:ed|ing|in)? (?:i|you|ye) (?:was|were|wis|wur) (?:dead|deid)\b",
    # A list item that is the wish itself ("Want: - to be dead").
    r"(?:^|\n|:)\s*[-*\u2022]\s*(?:to be dead|to die|be dead)\b(?! (?:for|than)\b)",
    r"\b(?:want|wanted|wish|wishing) to (?:go to )?sleep and (?:not|never) wake(?: up)?\b",
    r"\b(?:want|wanted|wanna|thinking (?:about|of)) (?:to )?end(?:ing)? everything\b(?! (?:with|"
    r"between)\b)",
    # Intent in the future tense, with a time: "end it" alone (or "for good") may be a
    # relationship or a gym membership.
    r"\b(?:going to|gonna|goin to|will|'ll|ll|about to|ready to|want to|wanna|need to|meant to) "
    r"end it(?: all)? (?:tonight|today|tomorrow|this week|this weekend|soon|before)"
    r"\b(?!,? (?:with|between)\b)",
    # Wanting out of life itself, or to stop existing.
    r"\bwant(?:ed|s)? (?:out of|to leave) (?:this )?life\b(?! of\b)",
    r"\b(?:want|wanna|wanted) to (?:stop existing|not exist|stop living|not be alive|never wake "
    r"up)\b",
    r"\b(?:'d|would|id) (?:much )?rather be dead\b",
    r"\b(?:plan|planning|planned|try|trying|tried|intend|intending|decided|chose) to (?:die|be "
    r"dead|end it(?: all)?|jump|kill (?:myself|yourself))\b",
    r"\bending it all\b|\bend it all\b",
    r"\b(?:thinking|think|thought|thoughts) (?:about|of) (?:dying|killing (?:myself|yourself)|"
    r"ending (?:my|your) life|ending it(?: all)?|hanging (?:myself|yourself)|jumping (?:off|in "
    r"front))\b",
    r"\b(?:i|i've|i have) attempted\b|\battempted (?:tonight|last night|again|today)\b",
    r"\bhope i (?:don't|dont|do not|won't|wont) wake up\b",
    r"\bso (?:that )?i (?:don't|dont|won't|wont|never) wake up\b",
    r"\b(?:fall|go|went|drift) (?:to )?(?:asleep|sleep) and (?:not|never) wake up\b",
    r"\b(?:hate|can't stand|cant stand|cannot stand|sick of|tired of) being alive\b",
    r"\btake all (?:my|the|of my) (?:pills|tablets|meds|medication)\b",
    r"\buse (?:it|them) on (?:myself|yourself)\b",
    r"\bdone (?:living|with living|with being alive)\b",
    r"\bwish(?:ed)? (?:i was|i were|i'd|id|you were|you was) dead\b",
    r"\bwish (?:i|you) (?:could )?(?:just )?(?:not wake up|wasn't (?:here|alive)|weren't (?:here|"
    r"alive)|didn't exist)\b",
    rf"\b(?:don't|dont|do not|no longer|not|never) (?:want|wanna|wanting) (?:to )?(?:be alive|{_LIVE}|"
    r"exist|be here (?:anymore|any more|any longer|no more)|wake up)\b",
    r"\bbetter off dead\b",
    r"\bno reason to (?:live|go on|keep going)\b",
    r"\b(?:can't|cannot) go on\b",
]

# The bare words: they name the subject, not whose it is (news of a suicide, a friend's
# overdose, a first-aid course on self-harm read the same as the writer's own). A mention is a
# risk when the meaning layer reads the entry as a sign and a concern otherwise (see
# ``agent.safety._layers``): never silence, since the resources are shown either way.
MENTIONS = [
    ("explicit", r"\bsuicid\w*"),
    ("explicit", r"\boverdos\w*"),
    ("self_harm", r"\bself[- ]?harm\w*"),
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
    r"\b(?:die|be dead) than\b",
    r"\bkill (?:myself|yourself) (?:laughing|over|trying|for)\b",
    r"\bwant(?:ed)? to die (?:of|from) (?:embarrassment|shame|boredom|laughing)\b",
    r"\bdeath saves?\b",
    r"\bkilling blow\b",
    r"\b(?!i\b)\w+ thought (?:i|i'd) (?:had )?(?:cut|hurt) myself\b",
    # Ending a service, not a life: "cancelled the gym membership to end it".
    r"\bcancel\w*\s+(?:my|the|our|that)\s+(?:[\w-]+\s+){0,3}"
    r"(?:membership|subscription|contract|plan|account|lease|policy)\s+(?:\w+\s+)?to end it\b",
]

_PATTERNS = [("explicit", re.compile(p, re.IGNORECASE)) for p in EXPLICIT] + [
    ("self_harm", re.compile(p, re.IGNORECASE)) for p in SELF_HARM
]
_MENTIONS = [(category, re.compile(p, re.IGNORECASE)) for category, p in MENTIONS]
_IDIOMS = [re.compile(p, re.IGNORECASE) for p in IDIOMS]
# Quoted speech: words in quotation marks (double, or single ones that open after a space).
_QUOTED = re.compile(r"\"[^\"\n]{1,400}\"|(?<![\w'])'(?:[^'\n]|'(?=\w)){1,400}'(?!\w)")
_YOU = re.compile(r"\byour(?= ?self\b| own\b| life\b)", re.IGNORECASE)


def normalise_quotes(text: str) -> str:
    return text.replace("\u2019", "'").replace("\u2018", "'")


def without_idioms(text: str) -> str:
    """``text`` with its figures of speech about death or harm blanked (the text itself when it
    has none, so a reader of the text can reuse what was read of it)."""
    cleaned = normalise_quotes(text)
    for pattern in _IDIOMS:
        cleaned = pattern.sub(" ", cleaned)
    return text if cleaned == normalise_quotes(text) else cleaned


def others_addressed(text: str) -> str:
    """``text`` with "your(self)" inside quoted speech made "their(self)": a writer who
    addresses themselves as "you" does it in their own voice, while "you" in quotation marks
    is someone speaking to someone else ("are you thinking about killing yourself?")."""
    return _QUOTED.sub(lambda quote: _YOU.sub("their", quote.group(0)), text)


def matches(text: str) -> tuple[str | None, str | None]:
    """What the patterns see in ``text``, read once: the category ("explicit" or "self_harm")
    of a statement, in the first person (or in the second, addressing oneself), of an intent to
    die or to self-harm, and the category of a bare mention of suicide, an overdose or
    self-harm; None for either that is not there."""
    cleaned = others_addressed(normalise_quotes(without_idioms(text)))
    statement = next((category for category, p in _PATTERNS if p.search(cleaned)), None)
    mention = next((category for category, p in _MENTIONS if p.search(cleaned)), None)
    return statement, mention


def statement_match(text: str) -> str | None:
    """The category of a first-person statement of intent in ``text``; None otherwise."""
    return matches(text)[0]


def mention_match(text: str) -> str | None:
    """The category of a bare mention in ``text``; None otherwise."""
    return matches(text)[1]


def explicit_match(text: str) -> str | None:
    """A statement or, failing one, a mention: what the patterns see in ``text``."""
    statement, mention = matches(text)
    return statement or mention
