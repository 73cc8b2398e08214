"""The tool a clause names after "with", "using", "through" or "via" when its verb is one no
pattern knows: "It plots with ggplot2", "Geocoded the addresses through the Census geocoder",
"rover_nav plans paths with Nav2". The clause's subject (the passage's project for "it", "I",
"we" or a log line with no subject) uses that tool. Only a name the gazetteer knows as a
technology, library, tool or service counts, so "paired with Ana" or "with care" give nothing."""

from __future__ import annotations

from kg.extraction.entity_types import software_type
from kg.extraction.judge import bare, common_phrase, owned_part, strong
from kg.extraction.lexicon import DETERMINERS, HEAD_TYPES, PRONOUNS
from kg.extraction.names import clean
from kg.extraction.nouns import common_noun, plain_word
from kg.extraction.phrases import ADVERBS_AUX, AUX_WORDS, Sentence, Tok
from kg.extraction.state import ExtractorBase, State

_MARKS = ("with", "using", "through", "via")
# Verbs whose "with" joins two peers or states a comparison, not a tool: no "uses" from these.
_NOT_INSTRUMENTAL = {
    "paired", "pairs", "pair", "compared", "compares", "compare", "along", "together",
    "compatible", "integrates", "integrated", "integrate", "works", "worked", "replaced",
    "swapped", "shared", "agreed", "talked", "met", "spoke", "chatted", "synced", "syncs",
    "ships", "shipped", "comes", "came", "bundled", "tested", "deal", "dealt", "struggled",
    "fought", "played", "experimented", "started", "ended", "done", "finished", "familiar",
    "happy", "stuck", "fine", "problems", "issues", "trouble", "help", "helped",
}  # fmt: skip
_HYPOTHETICAL = {
    "want", "wants", "would", "could", "should", "might", "plan", "planning", "maybe",
    "perhaps", "consider", "considering", "next", "todo", "try", "trying", "if", "whether",
}  # fmt: skip
_BUILT = {"built", "written", "made", "compiled", "implemented", "developed", "rewritten"}
# "deployed with Argo CD", "rolled out through Intune": the tool deploys the clause's subject.
_DEPLOYED = {"deployed", "rolled", "provisioned"}
_PREPOSITIONS = {"for", "of", "in", "on", "at", "from", "to", "into", "by", "about", "under"}
_SUBJECT_GAP = 4  # words allowed between the verb and "with" ("renders its widgets with")


def _part(said: str) -> bool:
    """ "the inference service": a definite phrase whose head names a part of a system."""
    words = said.split()
    return len(words) > 1 and words[-1].lower() in HEAD_TYPES


def _verbish(tok: Tok, prev: Tok | None) -> bool:
    """A lower-case verb form: a word the lexicon has only as a verb or adjective, a past form,
    or an "-s" form right after a subject word ("It plots with", "and plans paths with")."""
    low = tok.low
    if not (low.isalpha() and tok.text.islower()) or low in _NOT_INSTRUMENTAL:
        return False
    if plain_word(low) and (low.endswith(("s", "ed", "en")) or tok.first):
        return True
    if low.endswith("ed") and not common_noun(low):
        return True
    if not low.endswith("s") or prev is None:
        return False
    return prev.low in ("it", "and", ",", "also", "now") or (prev.first and prev.text.islower())


def _verb_follows(sent: Sentence, nxt: int) -> bool:
    """A verb or "is" at ``nxt``, perhaps after an adverb or "itself"."""
    toks = sent.toks
    while nxt < len(toks) - 1 and (toks[nxt].low in ADVERBS_AUX or toks[nxt].low == "itself"):
        nxt += 1
    if nxt >= len(toks):
        return False
    return (
        toks[nxt].low in AUX_WORDS
        or sent.verb_at(nxt) is not None
        or _verbish(toks[nxt], toks[nxt - 1] if nxt else None)
    )


class InstrumentRules(ExtractorBase):
    def _instruments(
        self,
        sent: Sentence,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
    ) -> None:
        toks = sent.toks
        if state.sentence.rstrip().endswith("?") or any(t.low in _HYPOTHETICAL for t in toks):
            return
        for i, tok in enumerate(toks):
            if tok.low not in _MARKS or i == 0:
                continue
            verb = self._instrument_verb(sent, i)
            if verb is None:
                continue
            span = sent.phrase_after(i + 1)
            found = clean(sent.span(*span)) if span is not None else None
            if span is None or found is None:
                continue
            if software_type(found) not in ("technology", "library", "tool", "service"):
                continue
            subject = self._instrument_subject(sent, verb, names, state)
            if subject is None:
                continue
            key = self._name(sent, span, names)
            if toks[verb].low in _DEPLOYED:
                self._connect(edges, state, key, subject, "deploys")
                continue
            rel = "built_with" if toks[verb].low in _BUILT else "uses"
            self._connect(edges, state, subject, key, rel)

    @staticmethod
    def _instrument_verb(sent: Sentence, i: int) -> int | None:
        """The verb a few words before "with" at ``i``, with only its object between."""
        toks = sent.toks
        for v in range(i - 1, max(-1, i - 1 - _SUBJECT_GAP), -1):
            tok = toks[v]
            if tok.low in _NOT_INSTRUMENTAL or tok.low in ("not", "no", "without", "never"):
                return None
            prev = toks[v - 1] if v else None
            if prev is not None and (
                prev.low in ("not", "never", "no", "longer") or prev.low.endswith(("n't", "n’t"))  # noqa: RUF001
            ):
                return None
            if sent.verb_at(v) is not None and sent.verb_within(v):
                # "renders PDF invoices with WeasyPrint": the scan reads the verb's own object,
                # the tool after it is this rule's.
                return v if tok.text.islower() else None
            if _verbish(tok, prev):
                return v
            if tok.text == ",":
                return None
        return None

    def _instrument_subject(
        self, sent: Sentence, verb: int, names: dict[str, str], state: State
    ) -> str | None:
        """Who does the clause's work: the name right before the verb, or the passage's topic
        for "it", "I", "we", a subject of common words or no subject at all."""
        toks = sent.toks
        k = verb
        while k > 0 and toks[k - 1].low in ADVERBS_AUX:
            k -= 1
        if k == 0 or toks[k - 1].low in ("i", "we", "i've", "we've"):
            return state.topic
        if toks[k - 1].low == "it":
            return state.last_subject or state.topic
        if toks[k - 1].low in ("and", ","):
            # "..., and plots with ggplot2", "X is a thin wrapper, deployed with Argo CD": the
            # sentence's own subject, else the last clause's.
            opening = self._opening_subject(sent, names, state)
            return opening[0] if opening is not None else state.last_subject
        if toks[k - 1].low in PRONOUNS:
            return None
        before = sent.phrase_before(k)
        if before is None or before[1] != k:
            return None
        if before[0] > 0 and toks[before[0] - 1].low in (*_PREPOSITIONS, "a", "an"):
            return None  # "the cert for api.example.org renews via", "a module wrapped with"
        return self._judged_subject(sent, before, names, state)

    def _opening_subject(
        self, sent: Sentence, names: dict[str, str], state: State
    ) -> tuple[str | None] | None:
        """What the phrase a sentence opens with stands for, when a verb or "is" follows it
        (``(None,)``: a phrase that stands for nothing); ``None`` when it opens with no subject."""
        span = sent.phrase_after(0)
        toks = sent.toks
        if toks[0].low == "it" and len(toks) > 1:
            return (state.last_subject or state.topic,)  # "It reads X and plots with Y"
        if span is None or span[1] >= len(toks):
            return None
        if any(toks[j].low not in DETERMINERS for j in range(span[0])):
            return None
        if not _verb_follows(sent, span[1]):
            # "rover_nav fuses GNSS": the phrase scan reads on through a verb it does not know.
            cut = next(
                (j for j in range(span[0] + 1, span[1]) if _verbish(toks[j], toks[j - 1])), None
            )
            if cut is None or not _verb_follows(sent, cut):
                return None
            span = (span[0], cut)
        return (self._judged_subject(sent, span, names, state),)

    def _judged_subject(
        self, sent: Sentence, before: tuple[int, int], names: dict[str, str], state: State
    ) -> str | None:
        said = sent.span(*before)
        if said.lower() == state.topic:
            return state.topic
        if common_phrase(said) or bare(said) or owned_part(sent, before):
            return state.topic
        definite = before[0] > 0 and sent.toks[before[0] - 1].low == "the"
        if clean(said) is None or not (strong(said) or (definite and _part(said))):
            return None
        return self._name(sent, before, names)
