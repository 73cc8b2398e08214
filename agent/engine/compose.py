# ruff: noqa: RUF001  (curly quotes and apostrophes are what entries contain)
"""The offline composer: a crux in the writer's terms, built deterministically from the entry.

A hypothesis is an archetype (the frame that explains the entry and drives the answer model);
what the writer reads is that frame in the second person plus the entry's own most supportive
span, lightly rephrased ("I" → "you", "my" → "your", ...: agent/engine/wording.py). The span is
cited verbatim, so the journal page can show which words the crux rests on, and nothing is named
that the entry does not name: the composer only ever copies the entry's words.

Spans are chosen by cosine to the archetype's statement, with a small bonus for its salience
cues and a penalty for reading like the other archetypes' statements (a span that says every
theme at once tells the writer nothing); the first cited span also weighs its cosine to the whole
entry, so the crux leads with what the entry is about. The weights were chosen on the training
writers of the crux development set (tests/agent/fixtures/crux/writer_01..04); see
docs/benchmarks.md.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from agent.engine.archetypes import _COMPILED, ARCHETYPES, BY_KEY
from agent.engine.wording import clauses, has_subject, quotes_first_person, turned

# Second-person frames, one per archetype: what kind of knot this is, addressed to the writer.
FRAMES: dict[str, str] = {
    "fear_of_failure": "You hold back from trying because falling short would make the failure real",
    "need_for_approval": "You need other people's approval before your effort feels good enough",
    "boundaries": "You keep giving your time because you can't bring yourself to say no",
    "grief_loss": "You're grieving what you lost, and the gap keeps surfacing",
    "burnout": "You've been running on empty for too long, with no real rest",
    "career_identity": "Your sense of who you are rested on a role that has changed",
    "relationship_conflict": "You and someone close keep having the same fight without repairing it",
    "low_self_worth": "You feel you don't deserve the good things in your life",
    "control_uncertainty": "You can't stand not knowing how this will turn out",
    "loneliness": "You're alone day to day, with no one close to share it with",
    "perfectionism": "Nothing feels acceptable unless it's flawless, so you keep redoing it",
    "resentment_fairness": "It feels unfair: others got the credit or reward you earned",
}
SPANS = 2  # spans a crux cites (three read closer to the gold cruxes on train, but long)
# A span the crux repeats is at most this long; a longer sentence is cited by its clauses, so
# the crux never stops mid-phrase.
SPAN_WORDS = 18
MAX_SPAN_WORDS = SPAN_WORDS
# A crux shows at most this many words of each cited sentence (its most telling clause when
# the sentence is longer). Longer cruxes (18 and 44) only looked better while every decoy of the
# dev sets was half the gold's length: a crux that quoted more of the entry read closer to the
# long gold whatever it said. With decoys as specific as the gold, 12 and 30 read as well or
# better on the train writers (0.64 against 0.62 with the central first sentence, 0.62 against
# 0.60 without it; docs/benchmarks.md, crux), and short is what a writer takes in at a glance.
CLAUSE_WORDS = 12
MAX_WORDS = 30  # a whole crux; a second cited sentence that does not fit is cited, not shown
CUE_BONUS = 0.04
CONTRAST = 0.5  # weight of the mean cosine to the other live hypotheses' statements
# Weight of a span's cosine to the whole entry when the first cited sentence is chosen: the
# crux then leads with what the entry is about, seen through the archetype (chosen on the train
# writers with leave-one-writer-out, docs/benchmarks.md, crux).
CENTRAL = 1.0

# A line's end closes a sentence too: a list's items often have no full stop.
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+[\"'’”)]*|$)", re.MULTILINE)
_CLAUSE = re.compile(r"[^,;:—]+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


@dataclass(frozen=True)
class Composed:
    text: str
    spans: list[str]


def frame(archetype: str) -> str:
    return FRAMES.get(archetype, "")


def candidate_spans(entry: str) -> list[str]:
    """Sentences of the entry (verbatim, bullets and outer space stripped); a long sentence is
    offered as its clauses as well."""
    out: list[str] = []
    for match in _SENTENCE.finditer(entry):
        sentence = _BULLET.sub("", match.group(0)).strip()
        if len(sentence.split()) < 3:
            continue
        out.append(sentence)
        if len(sentence.split()) > MAX_SPAN_WORDS:
            for clause in _CLAUSE.finditer(sentence):
                part = clause.group(0).strip()
                if len(part.split()) >= 4:
                    out.append(part)
    seen: set[str] = set()
    unique = [s for s in out if not (s in seen or seen.add(s))]  # type: ignore[func-returns-value]
    return [s for s in unique if s in entry]


def _cue_count(archetype: str, text: str) -> int:
    return sum(1 for p in _COMPILED.get(archetype, []) if p.search(text))


def rank_spans(
    entry: str,
    archetype: str,
    rivals: Sequence[str] = (),
    *,
    avoid: Sequence[str] = (),
    central: float = 0.0,
) -> list[str]:
    """The entry's spans, most supportive of ``archetype`` first (against the other archetypes;
    ``rivals`` is accepted for callers that know the live hypotheses, and not used yet).
    ``central`` adds that weight times each span's cosine to the whole entry: how much of what
    the entry is about the span carries."""
    from agent.engine.beliefs import embed

    every = candidate_spans(entry)
    keep = [i for i, s in enumerate(every) if s not in avoid] or list(range(len(every)))
    if not keep:
        return []
    spans = [every[i] for i in keep]
    own = BY_KEY[archetype].crux if archetype in BY_KEY else archetype
    others = [a.crux for a in ARCHETYPES if a.key != archetype]
    statements = embed([own, *others])
    # All of the entry's spans in one batch, whatever is avoided: the same batch serves every
    # archetype, option and crux of the entry (keyed by the avoided subset, it missed each time).
    span_vectors = _embed_spans(tuple(every))[keep]
    score = span_vectors @ statements[0]
    if others:
        score = score - CONTRAST * (span_vectors @ statements[1:].T).mean(axis=1)
    score = score + CUE_BONUS * _cue_count_array(archetype, spans)
    if central:
        score = score + central * (span_vectors @ embed([entry])[0])
    # Clauses of a long sentence compete with it; shorter wins ties.
    order = sorted(range(len(spans)), key=lambda i: (-float(score[i]), len(spans[i]), i))
    return [spans[i] for i in order]


@lru_cache(maxsize=256)
def _embed_spans(spans: tuple[str, ...]) -> np.ndarray:
    """The spans of one entry in one batch (a turn composes several cruxes from them)."""
    from legacymind.providers.embeddings import get_provider

    return get_provider().embed(list(spans)).astype(np.float32)


def _cue_count_array(archetype: str, spans: Sequence[str]) -> np.ndarray:
    return np.array([min(2, _cue_count(archetype, s)) for s in spans], dtype=float)


def compose(
    entry: str,
    archetype: str,
    rivals: Sequence[str] = (),
    *,
    avoid: Sequence[str] = (),
    fallback: str = "",
) -> Composed:
    """The crux of ``archetype`` in the writer's terms, with the spans it cites. A hypothesis
    outside the catalogue (the writer's own words) keeps ``fallback`` as its text."""
    if archetype not in FRAMES:
        return Composed(fallback, [])
    ranked = rank_spans(entry, archetype, rivals, avoid=avoid)
    if not ranked:
        return Composed(FRAMES[archetype] + ".", [])
    # The first cited sentence says the archetype and carries the entry; the second says the
    # archetype best of the rest.
    lead = _fitting(rank_spans(entry, archetype, rivals, avoid=avoid, central=CENTRAL))[0]
    spans = _fitting([lead, *(s for s in ranked if s != lead)])[:SPANS]
    left = MAX_WORDS - len(FRAMES[archetype].split())
    parts: list[str] = []
    for span in spans:
        part = shown(entry, archetype, span, left) or (
            "" if parts else shown(entry, archetype, span, SPAN_WORDS + 1)
        )
        if part:
            parts.append(part)
            left -= len(part.split())
    body = "; ".join(parts)
    return Composed(f"{FRAMES[archetype]}: {body}.", spans)


def pieces(span: str) -> list[str]:
    """The clauses of ``span`` a crux may show (wording.clauses; a clause longer than
    ``CLAUSE_WORDS`` is split again at its conjunctions)."""
    return clauses(span, CLAUSE_WORDS)


def shown(entry: str, archetype: str, span: str, limit: int = MAX_WORDS) -> str:
    """What a crux shows of a cited ``span``: the whole sentence when it is short, otherwise
    its clause that says the archetype best, in the second person, at most ``limit`` words
    ("" when no clause fits). The span itself stays the citation, verbatim."""
    candidates = [span, *(p for p in pieces(span) if p != span)]
    reworded = {c: turned(entry, c, span) for c in candidates if has_subject(c, span)}
    if not reworded:
        reworded = {span: turned(entry, span, span)}
    within = {c: t for c, t in reworded.items() if len(t.split()) <= limit}
    if not within:
        return ""
    short = {c: t for c, t in within.items() if len(t.split()) <= CLAUSE_WORDS}
    pool = list(short or within)
    scores = _piece_scores(entry, archetype, tuple(pool))
    best = min(
        range(len(pool)),
        key=lambda i: (
            quotes_first_person(pool[i]),  # "I"/"my" in quoted speech cannot be turned
            pool[i] != span,  # a short sentence is shown whole
            -float(scores[i]) if short else len(within[pool[i]].split()),
            i,
        ),
    )
    return within[pool[best]]


def _piece_scores(entry: str, archetype: str, pool: tuple[str, ...]) -> np.ndarray:
    """How well each clause says ``archetype`` (as spans are ranked: against the other
    archetypes' statements, with the cue bonus)."""
    if len(pool) == 1:
        return np.zeros(1)
    from agent.engine.beliefs import embed

    own = BY_KEY[archetype].crux
    others = [a.crux for a in ARCHETYPES if a.key != archetype]
    statements = embed([own, *others])
    every = _entry_pieces(entry)
    index = {p: i for i, p in enumerate(every)}
    if all(p in index for p in pool):
        vectors = _embed_spans(every)[[index[p] for p in pool]]
    else:  # a span from outside the entry's sentences (not composed by this module)
        vectors = _embed_spans(pool)
    score = vectors @ statements[0] - CONTRAST * (vectors @ statements[1:].T).mean(axis=1)
    return score + CUE_BONUS * _cue_count_array(archetype, pool)


@lru_cache(maxsize=256)
def _entry_pieces(entry: str) -> tuple[str, ...]:
    """Every span of the entry and every clause of them: embedded in one batch, they serve
    every crux the entry's turns compose."""
    out: dict[str, None] = {}
    for span in candidate_spans(entry):
        out[span] = None
        for piece in pieces(span):
            out[piece] = None
    return tuple(out)


def _fitting(ranked: Sequence[str]) -> list[str]:
    """The ranked spans short enough to repeat whole, no two overlapping (a clause inside a
    chosen sentence, or the sentence around a chosen clause, says it twice). An entry with no
    short span (one long unbroken sentence) gives its best span cut at its last complete word
    group that fits, so the crux still ends on a whole phrase."""
    out: list[str] = []
    for span in ranked:
        if len(span.split()) > SPAN_WORDS or any(span in o or o in span for o in out):
            continue
        out.append(span)
    if out:
        return out
    words = ranked[0].split()[:SPAN_WORDS]
    cut = " ".join(words)
    head = _CLAUSE.match(cut)
    return [head.group(0).strip() if head and len(head.group(0).split()) >= 4 else cut]


def options(entry: str, archetypes: Sequence[str]) -> list[str] | None:
    """Quick options in the entry's own terms, one per archetype in order: the crux the agent
    would confirm for it, the frame and the sentences it rests on. The writer recognises their
    own sentences, and the option they pick is the crux they get. None when an archetype is
    outside the catalogue, the entry has no spans, or two options would read the same (the
    caller then offers the catalogue's options)."""
    if any(a not in FRAMES for a in archetypes):
        return None
    out = []
    for archetype in archetypes:
        composed = _composed(entry, archetype)
        if not composed.spans:
            return None
        out.append(composed.text)
    return out if len(set(out)) == len(out) else None


@lru_cache(maxsize=512)
def _composed(entry: str, archetype: str) -> Composed:
    """``compose`` with no rivals or avoided spans, memoised: a turn offers the same cruxes as
    options, compares them for seeding and confirms one of them."""
    return compose(entry, archetype)


def distinct(entry: str, ranked: Sequence[str], limit: int) -> list[str]:
    """The first ``limit`` archetypes of ``ranked`` whose cruxes rest on different sentences:
    two archetypes citing the same spans offer the writer one reading twice, and a question
    between them tells nothing apart."""
    seen: set[tuple[str, ...]] = set()
    out = []
    for archetype in ranked:
        key = tuple(sorted(_composed(entry, archetype).spans))
        if key in seen:
            continue
        seen.add(key)
        out.append(archetype)
        if len(out) == limit:
            break
    return out


_CAPITALISED = re.compile(r"\b[A-Z][\w'’-]*")


_ADDRESS = frozenset(
    {"I", "You", "Your", "Yours", "Yourself", "You're", "You've", "You'd", "You'll"}
)


def invented_names(crux: str, entry: str) -> list[str]:
    """Capitalised words of ``crux`` (not its first word, not "I", not the second-person words a
    crux addresses the writer with) that the entry never uses."""
    # A closing quote is not part of the name: "'Mia'" in the entry is Mia, and \b cannot follow
    # a quote, so a crux quoting it would count Mia' as invented.
    words = [w.rstrip("'’-") for w in _CAPITALISED.findall(crux)]
    first = crux.split(" ", 1)[0] if crux else ""
    return [
        w
        for w in words
        if w != first and w not in _ADDRESS and not re.search(rf"\b{re.escape(w)}\b", entry)
    ]
