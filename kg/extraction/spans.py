"""Where a relation's parts lie in a sentence: where its subject ends, whether it is negated, the
next conjunct of a list of objects, what "which" or "it" stands for, a name set off by commas."""

from __future__ import annotations

from kg.extraction.judge import (
    apposed_name,
    bare,
)
from kg.extraction.lexicon import (
    HEAD_TYPES,
)
from kg.extraction.names import clean
from kg.extraction.phrases import (
    Sentence,
    between_subject_and_verb,
)
from kg.extraction.state import (
    Scan,
)


def next_conjunct(sent: Sentence, i: int, particle: str | None) -> int | None:
    """Where the next object joined to the one ending at ``i`` starts, or None: "A, B and C",
    "A as well as B", "on A and on B" (the preposition repeated), and "A for caching and B for
    storage" (a purpose phrase after each, so the one after the first is passed over)."""
    toks = sent.toks
    n = len(toks)
    if i < n and toks[i].low == "for" and (span := sent.phrase_after(i + 1)) is not None:
        after = next_conjunct(sent, span[1], particle)
        following = sent.phrase_after(after) if after is not None else None
        if following is not None and following[1] < n and toks[following[1]].low == "for":
            return after
        return None
    if i + 1 < n and toks[i].text == "," and toks[i + 1].low == "and":
        i += 1
    if [t.low for t in toks[i : i + 3]] == ["as", "well", "as"]:
        return i + 3
    if i >= n or toks[i].low not in ("and", "or", ",", "+"):
        return None
    nxt = i + 1
    if particle is not None and nxt < n and toks[nxt].low == particle:
        nxt += 1
    return nxt


def subject_end(sent: Sentence, i: int) -> int:
    """ "the export worker also depends on", "should use", "doesn't use": the subject sits
    before a few adverbs and auxiliaries. Returns where it ends."""
    toks = sent.toks
    k = i
    while k > 0 and i - k < 3 and between_subject_and_verb(toks[k - 1]):
        k -= 1
    return k


def is_negated(sent: Sentence, k: int, i: int) -> bool:
    """A "not", "never", "no" or "n't" just before the verb: "doesn't use" states no relation;
    nor does a verb after "instead of"."""
    toks = sent.toks
    if k >= 2 and (toks[k - 2].low, toks[k - 1].low) in (("instead", "of"), ("rather", "than")):
        return True  # "instead of going through Celery": the relation that was given up
    return any(
        t.low in ("not", "never", "no") or t.low.endswith(("n't", "n’t"))  # noqa: RUF001
        for t in toks[max(0, k - 2) : i]
    )


def relative_subject(
    sent: Sentence,
    k: int,
    before: tuple[int, int] | None,
    clause_from: int,
    scan: Scan,
    names: dict[str, str],
) -> str | None:
    """ "Supabase, which handles auth and stores logs in ...": after a "which" or "who" in this
    clause, a verb with no subject name of its own has the last object as its subject."""
    own = before is not None and before[0] >= clause_from
    if (
        scan.last_object
        and any(t.low in ("which", "who") for t in sent.toks[clause_from:k])
        and (not own or not [x for x in scan.subjects if x and clean(names.get(x, x)) is not None])
    ):
        return scan.last_object
    return None


def appositive_at(sent: Sentence, k: int) -> tuple[int, int] | None:
    """A capitalised name between commas just before the verb: "The team lead, Maria, manages"."""
    toks = sent.toks
    if k < 3 or toks[k - 1].text != ",":
        return None
    span = sent.phrase_before(k - 1)
    if span is None or span[0] == 0 or toks[span[0] - 1].text != ",":
        return None
    return span if apposed_name(sent.span(*span)) else None


def sentence_head(sent: Sentence, pronoun: int) -> tuple[int, int] | None:
    """ "The Stripe webhook handler times out because it calls ...": a named, definite phrase
    that opens the sentence is what a later "it" in the same sentence refers to."""
    toks = sent.toks
    if not toks or toks[0].low not in ("the", "our", "my", "this") or pronoun < 3:
        return None
    span = sent.phrase_after(0)
    if span is None or span[1] >= pronoun:
        return None
    heads = [m for m in range(span[0], span[1]) if toks[m].low in HEAD_TYPES]
    if heads:
        span = (span[0], heads[0] + 1)  # "The upload service stalls": the head noun ends it
    name = clean(sent.span(*span))
    return span if name is not None and not bare(name) else None
