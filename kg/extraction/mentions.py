"""A README's, changelog's or work log's sentences about its own project often name no subject
("Written in Go", "Uses SQLite for storage"), or "it", or a part of the project in common words
("Impulse responses are loaded from WAV files"), with a verb no pattern knows. When the passage
has a title (a heading, or a log's or release note's opening line), a known technology, library,
tool or service named in such a sentence is one the project uses; the preposition before the
name says how ("on" runs on, "from" reads from, "to" writes to, "in ... written" built with).

Not drawn: names after "from" in a migration or before "instead of" (the replaced end), names in
a negated, hypothetical or question sentence, names already at an end of an edge from the same
sentence, and people."""

from __future__ import annotations

import re

from kg.extraction.entity_types import given_name, software_type
from kg.extraction.judge import bare, common_phrase, owned_part
from kg.extraction.lexicon import CANONICAL_RELATIONS, DETERMINERS, VERBS_BY_FIRST, canonical
from kg.extraction.names import clean, known_type
from kg.extraction.nouns import plain_word
from kg.extraction.phrases import AUX_WORDS, Sentence, Tok
from kg.extraction.state import MIGRATION_VERBS, ExtractorBase, State

_KINDS = ("technology", "library", "tool", "service")
_NEGATION = {
    "not", "no", "never", "without", "dropped", "removed", "drop", "remove", "deprecated",
    "instead", "rather", "unsupported", "longer", "replaced", "replace", "swapped",
    "won't", "don't", "doesn't", "didn't", "isn't", "can't", "cannot", "retired", "gone",
}  # fmt: skip
_HYPOTHETICAL = {
    "want", "wants", "would", "could", "should", "might", "plan", "planning", "maybe",
    "perhaps", "consider", "considering", "next", "todo", "try", "trying", "if", "whether",
    "will", "hope", "tomorrow", "someday", "eventually",
}  # fmt: skip
# The preposition before a name -> the relation of the project to it.
_BY_PREPOSITION = {
    "on": "runs_on", "from": "reads_from", "to": "writes_to", "into": "writes_to",
    "as": "writes_to", "with": "uses", "via": "uses", "through": "uses", "using": "uses",
    "by": "uses", "in": "uses", "for": "integrates_with",
}  # fmt: skip
_VERB_WINDOW = 6  # tokens a verb may stand before the name it governs ("keeps everything in a")
_PASSIVE_AUX = {"is", "are", "was", "were", "be", "been", "being", "get", "gets", "got"}
_CLAUSE_BREAKS = {",", ";", ":", "and", "but", "while", "which", "that", "(", ")"}


def _verb_relation(toks: list[Tok], first: int) -> str | None:
    """The relation of the nearest verb before the name in its own clause ("keeps everything in
    a single SQLite file": stores_in; "depends on three crates: needletail"): the verb, not a
    default "uses", says how the project holds the thing. Passive and two-object verbs are the
    clause rules' business, not this one's."""
    for k in range(first - 1, max(-1, first - 1 - _VERB_WINDOW), -1):
        low = toks[k].low
        if low in _CLAUSE_BREAKS:
            return None
        if toks[k].first or (k > 0 and toks[k - 1].low in _PASSIVE_AUX):
            continue  # "Support for X" (a noun), "are published over X" (passive)
        for pattern in VERBS_BY_FIRST.get(low, ()):
            if pattern.reverse or pattern.two_objects:
                continue
            words = pattern.words
            if tuple(t.low for t in toks[k : k + len(words)]) != words or k + len(words) > first:
                continue
            relation, swapped = canonical(pattern.relation)
            if not swapped and relation in CANONICAL_RELATIONS and relation != "related_to":
                return relation
    return None


# A label before a colon at a line's start: "Under the hood:", "**Audit log**:".
_LABEL = re.compile(r"[ \t*_]*[A-Za-z][\w '-]{0,30}?[*_]*:[ \t]")
_OPENING_PARTS = ("it", "it's", "its", "this", "the", "our", "my", "all", "each", "every")


class MentionRules(ExtractorBase):
    def _mentions(
        self,
        sent: Sentence,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
    ) -> None:
        topic = state.topic
        toks = sent.toks
        if topic is None or not state.titled or not toks:
            return
        if state.sentence.rstrip().endswith("?") or any(
            t.low in _NEGATION or t.low in _HYPOTHETICAL or t.low in MIGRATION_VERBS for t in toks
        ):
            return
        if not self._about_topic(sent, names, state):
            return
        ends = {
            key for pair, said in state.evidence.items() if said == state.sentence for key in pair
        }
        i = 0
        while i < len(toks):
            span = sent.phrase_after(i)
            if span is None or span[0] != i + self._skipped(sent, i):
                i += 1
                continue
            found = clean(sent.span(*span))
            i = span[1]
            if found is None or given_name(found):
                continue
            if software_type(found, initial=toks[span[0]].first) not in _KINDS:
                continue
            key = sent.span(*span).lower()
            if key == topic or key in ends or found.lower() in ends:
                continue
            first = span[0]
            while first > 0 and sent.toks[first - 1].low in DETERMINERS:
                first -= 1
            prep = toks[first - 1].low if first > 0 else ""
            if prep == "for" and first > 1 and known_type(toks[first - 2].text) is not None:
                continue  # "written as VTK for ParaView": the format serves the viewer
            rel = _BY_PREPOSITION.get(prep, "uses")
            if rel == "uses":
                rel = _verb_relation(toks, first) or rel
            names.setdefault(key, sent.span(*span))
            self._connect(edges, state, topic, key, rel)

    @staticmethod
    def _skipped(sent: Sentence, i: int) -> int:
        n = 0
        while i + n < len(sent.toks) and sent.toks[i + n].low in DETERMINERS:
            n += 1
        return n

    @staticmethod
    def _about_topic(sent: Sentence, names: dict[str, str], state: State) -> bool:
        """The sentence speaks of the project: it opens with its name, "it", a part of it in
        common words, or a verb or participle (no subject at all)."""
        toks = sent.toks
        first = toks[0]
        if first.low in ("it", "it's", "its"):
            return True
        label = _LABEL.match(state.sentence)
        if label is not None and not any(
            sent.verb_at(j) is not None for j, t in enumerate(toks) if t.end <= label.end()
        ):
            return True  # "Under the hood: Elixir, Phoenix and Oban", "**Storage**: ..."
        if first.low in ("a", "an") and not any(
            sent.verb_at(j) is not None or toks[j].low in AUX_WORDS for j in range(len(toks))
        ):
            return True  # "A Nextflow pipeline for variant calling.": the project's tagline
        if (
            plain_word(first.low)
            and first.low not in DETERMINERS
            and not first.low.endswith(("ed", "en", "s"))
        ):
            return False  # "Install it from PyPI with pip": an instruction to the reader
        span = sent.phrase_after(0)
        if span is None:
            return first.text[:1].isupper() and first.low.endswith(("ed", "es", "s"))
        said = sent.span(*span)
        if said.lower() == state.topic or said.lower().startswith(f"{state.topic} "):
            return True
        if span[0] > 0 and toks[0].low in _OPENING_PARTS:
            return common_phrase(said) or bare(said) or owned_part(sent, span)
        return span[0] == 0 and (common_phrase(said) or bare(said.lower()))
