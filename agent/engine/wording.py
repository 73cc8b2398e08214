# ruff: noqa: RUF001  (curly quotes and apostrophes are what entries contain)
"""Wording for the offline composer: the entry's words turned to the second person, a sentence
cut into clauses that can stand alone, a subject for a diary line that has none, and tidy
punctuation. Nothing here chooses what a crux says (agent/engine/compose.py does); it only
rewords what was chosen, and every clause it returns is a verbatim substring of its sentence."""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_PIECE_BREAK = re.compile(r"\s*[,;:()]\s*|\s+[—–-]\s+|—")
_JOINER = re.compile(
    r"\s+(?:and|but|so|because|or|yet|though|although|while|whereas|when|then|which|until|before|after)\s+",
    re.IGNORECASE,
)
_LEADING = re.compile(
    r"^(?:(?:and|but|so|or|yet|then|also|plus|anyway|because|though|although|cause|cos)\b[\s,]*)+",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself|i'm|i’m|i've|i’ve|i'd|i’d|i'll|i’ll)\b", re.I)
# Quoted speech: double quotes, or single ones that open and close outside a word (an
# apostrophe inside "you're" neither opens nor closes a quote).
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|(?<!\w)['‘](?=\w).*?(?<=[\w.!?,])['’](?!\w)")

# A clause cut out of a sentence that opens with one of these is a fragment ("of the maths
# test", "to her sister"): it is shown only as part of its sentence.
_FRAGMENT_OPENERS = _words(
    "of to for with at in on by from about than as like into onto over under through without"
)
_WRITER = frozenset(["i", "i'm", "i've", "i'd", "i'll", "im", "ive"])
# A clause cut from a sentence that opens with one of these (or an "-ly" adverb: "mostly at
# myself") has no subject of its own.
_NO_SUBJECT = _words("which who whom whose where what how whether than not no even only")
# How a diary sentence without a subject starts: the writer did or felt it ("Said yes…",
# "Can't sleep…"); "-ed" words count too, but not these moods, which take "you're".
_DIARY_VERBS = _words(
    "said told went got made took had kept spent left came saw felt thought knew found gave sat "
    "stood ate ran wrote called woke slept bought lost forgot let put did tried asked can't "
    "couldn't don't didn't won't wouldn't haven't hadn't shouldn't cannot keep need want feel "
    "hate love miss wish think know guess hope still just never always nearly almost actually "
    "finally drove rode drank heard held met paid sent brought caught taught won rang sang spoke "
    "threw wore broke chose fell fought flew grew hung meant sold shut stuck began"
)
# A past tense with a prefix is still one ("Rewrote the first paragraph…", "Overslept").
_VERB_PREFIX = re.compile(r"^(?:re|over|under|mis|out)(?=[a-z]{3})")
_MOODS = _words(
    "tired exhausted worried scared stressed annoyed angry sad lonely bored sick fed done "
    "afraid anxious furious gutted knackered shattered embarrassed ashamed frustrated "
    "overwhelmed"
)

# First person → second person, longest first; matched on word boundaries, case kept.
_SWAPS: tuple[tuple[str, str], ...] = (
    ("i'm", "you're"),
    ("i’m", "you’re"),
    ("i've", "you've"),
    ("i’ve", "you’ve"),
    ("i'd", "you'd"),
    ("i’d", "you’d"),
    ("i'll", "you'll"),
    ("i’ll", "you’ll"),
    ("i am", "you are"),
    ("i was", "you were"),
    ("i wasn't", "you weren't"),
    ("am i", "are you"),
    ("was i", "were you"),
    ("im", "you're"),
    ("ive", "you've"),
    ("myself", "yourself"),
    ("mine", "yours"),
    ("my", "your"),
    ("me", "you"),
    ("i", "you"),
    ("am", "are"),
)
_SWAP = re.compile(
    r"\b(" + "|".join(re.escape(a) for a, _ in sorted(_SWAPS, key=lambda s: -len(s[0]))) + r")\b",
    re.IGNORECASE,
)
_SWAP_TO = {a: b for a, b in _SWAPS}
_PRONOUNS = {b.split()[0] for _, b in _SWAPS} | {"you"}
# Words that open a sentence but never a name: a span starting with one is lowered even when
# the entry only ever writes it at a sentence's start ("…; his reading glasses…").
_FUNCTION_WORDS = _words(
    "a an the this that these those his her hers its their theirs our ours he she it they we "
    "there here every each some any no none all both either neither one another such what when "
    "where which who how why if then so but and or yet because after before while later now "
    "today tonight yesterday still even only maybe sometimes first second third last next"
)


def second_person(span: str, entry: str = "") -> str:
    """``span`` with first-person words turned to the second person (quoted speech kept as it
    is), its first letter lowered unless it starts with a name, end punctuation trimmed."""
    pieces: list[str] = []
    last = 0
    for quoted in _QUOTED.finditer(span):
        pieces.append(_swap(span[last : quoted.start()]))
        pieces.append(quoted.group(0))
        last = quoted.end()
    pieces.append(_swap(span[last:]))
    text = "".join(pieces).strip().rstrip(".!?;:,—- ")
    first = text.split(" ", 1)[0].strip("\"'“‘")
    pronoun = first.lower() in _PRONOUNS or first.lower() in _FUNCTION_WORDS
    if first and first[0].isupper() and (pronoun or not _proper(first, entry)):
        index = text.index(first[0])
        text = text[:index] + first[0].lower() + text[index + 1 :]
    return text


def _swap(text: str) -> str:
    def repl(match: re.Match[str]) -> str:
        word = match.group(0)
        own = word.lower() == "i" or word.lower()[:2] in ("i'", "i’", "i ")
        if word[0].isupper() and not own and _in_name(match.string[: match.start()]):
            return word  # part of a name the entry wrote ("Find My Phone"), not the writer
        out = _SWAP_TO[word.lower()]
        return out[0].upper() + out[1:] if word[0].isupper() and not own else out

    return _SWAP.sub(repl, text)


def _in_name(before: str) -> bool:
    """Whether a capitalised word that follows ``before`` is inside a sentence, where a writer
    capitalises "My" or "Me" only in a name ("Find My Phone", "My Way"): some word comes before it
    and that word ends no sentence, clause or list item."""
    prev = re.search(r"(\S+)\s+$", before)
    if not prev:
        return False
    return not prev.group(1).endswith(
        (".", "!", "?", ":", ";", ",", '"', "”", "'", "’", "-", "*", "•", "—", "(")
    )


def _proper(word: str, entry: str) -> bool:
    """Whether ``word`` reads as a name in the entry: written capitalised inside a sentence, or
    never written in lower case."""
    if word == "I" or not entry:
        return False
    inside = re.search(rf"(?<![.!?]\s)(?<!^)\b{re.escape(word)}\b", entry)
    return bool(inside) or not re.search(rf"\b{re.escape(word.lower())}\b", entry)


def clauses(span: str, split_over: int) -> list[str]:
    """The clauses of ``span`` (verbatim substrings), split at punctuation outside quoted speech
    and, when a clause is still longer than ``split_over`` words, at its conjunctions; a clause
    never starts with a conjunction ("and you cannot picture…") and never breaks a quotation."""
    quoted = [(m.start(), m.end()) for m in _QUOTED.finditer(span)]

    def outside(i: int) -> bool:
        return not any(a < i < b for a, b in quoted)

    def split(text: str, start: int, pattern: re.Pattern[str]) -> list[tuple[int, str]]:
        out, last = [], 0
        for match in pattern.finditer(text):
            if outside(start + match.start()):
                out.append((start + last, text[last : match.start()]))
                last = match.end()
        out.append((start + last, text[last:]))
        return out

    found: list[str] = []
    for start, clause in split(span, 0, _PIECE_BREAK):
        parts = [(start, clause)]
        if len(clause.split()) > split_over:
            parts += split(clause, start, _JOINER)
        for _, part in parts:
            text = _LEADING.sub("", part.strip()).strip(" \t-–—")
            whole = start == 0 and part.strip() == span.strip()
            if len(text.split()) < 3 or not balanced(text) or text in found:
                continue
            if whole or first_word(text) not in _FRAGMENT_OPENERS:
                found.append(text)
    return found


def balanced(text: str) -> bool:
    opening = len(re.findall(r"(?<!\w)['‘](?=\w)", text))
    closing = len(re.findall(r"(?<=[\w.!?,])['’](?!\w)", text))
    return text.count('"') % 2 == 0 and text.count("“") == text.count("”") and opening == closing


def turned(entry: str, piece: str, span: str) -> str:
    """A clause of ``span`` as the crux shows it: no leading conjunction, second person, a
    subject when the diary line has none, tidy punctuation."""
    piece = _LEADING.sub("", piece).strip() or piece
    return tidy(with_subject(second_person(piece, entry), piece, span))


def has_subject(piece: str, span: str) -> bool:
    """Whether a clause can stand as said by the writer: the sentence's opening, a clause that
    starts with a verb or a mood when the sentence's subject is the writer (an "I" sentence, or
    a diary sentence with none), or any other clause not opening as a fragment does ("mostly at
    myself", "which is a lie")."""
    if span.startswith(piece):
        return True
    word = first_word(piece)
    if verb_first(word) or word in _MOODS:
        head = first_word(span)
        return head in _WRITER or verb_first(head) or head in _MOODS
    return word not in _NO_SUBJECT and not (word.endswith("ly") and len(word) > 3)


def with_subject(text: str, piece: str, span: str) -> str:
    """A diary sentence without a subject ("Said yes to covering Lena's shift again.") gets
    the writer's: "you said yes…"; "Tired again" → "you're tired again"."""
    word = first_word(text)
    if word in _MOODS:
        return "you're " + text[0].lower() + text[1:]
    if word in ("was", "wasn't", "am"):
        rest = text.split(" ", 1)[1] if " " in text else ""
        verb = {"was": "were", "wasn't": "weren't", "am": "are"}[word]
        return f"you {verb} {rest}".strip()
    if verb_first(word):
        return "you " + text[0].lower() + text[1:]
    return text


def tidy(text: str) -> str:
    """No doubled or dangling punctuation: the crux adds its own ";" and "."."""
    text = text.strip().lstrip(",;:—–- ").rstrip(".!?;:,—–- ")
    # A quotation that closes the clause drops its own closing stop: "…forever, Priya'".
    text = re.sub(r"[.!?,;:]+(['’\"”])$", r"\1", text)
    text = re.sub(r"([,;:.!?])\1+", r"\1", text)
    return re.sub(r"\s+", " ", text)


def quotes_first_person(text: str) -> bool:
    return any(_FIRST_PERSON.search(q.group(0)) for q in _QUOTED.finditer(text))


def first_word(text: str) -> str:
    words = text.split()
    return words[0].strip("\"'“‘(").lower().replace("’", "'") if words else ""


def verb_first(word: str) -> bool:
    if word in _DIARY_VERBS or (len(word) > 4 and word.endswith("ed") and word not in _MOODS):
        return True
    bare = _VERB_PREFIX.sub("", word)
    return bare != word and bare in _DIARY_VERBS
