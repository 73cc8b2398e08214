"""The offline extractor: relations from verb patterns, names from the noun phrases around them.

The original turned every capitalised token into an entity ("The", "This", "Sources:"). Here a
name is a noun phrase that is the subject or object of a relation verb ("A uses B", "X depends
on Y", "A -> B", "X is part of Y", "replaced X with Y", ``snake_case`` relations), or a token that
looks like a name by its spelling (CamelCase, digits, underscores, a capital word in mid-sentence).
Determiners, pronouns, function words and punctuation never become part of a name, and a
synthesis's citations (its "Sources:" list, ``thoughts:``/``kge:``/``kgo:`` ids) are never read:
see ``phrases.strip_sources``.
"""

from __future__ import annotations

import itertools
import re

from kg.extraction.clauses import (
    first_person_topic,
    glossed_topic,
    headed_participle,
    join_colon_lists,
    log_topic,
    paired_on,
    passive_agent,
    passive_source,
    relative_antecedent,
    release_platform,
    release_topic,
    required_items,
)
from kg.extraction.entity_types import described_kind
from kg.extraction.entity_types import entity_type as entity_type
from kg.extraction.entity_types import looks_like_person as _looks_like_person
from kg.extraction.entity_types import resolve_type as _type
from kg.extraction.finish import clean_name, kept_edges
from kg.extraction.instruments import InstrumentRules
from kg.extraction.judge import (
    capitalised_noun,
    owned_part,
)
from kg.extraction.lexicon import (
    ARROWS,
    HEAD_TYPES,
    NOT_NAMES,
    PRONOUNS,
)
from kg.extraction.mentions import MentionRules
from kg.extraction.migrations import MigrationRules
from kg.extraction.names import clean, known_lower
from kg.extraction.phrases import (
    RELATIVE,
    Sentence,
    Tok,
    determiner,
    is_technical,
    name_word,
    sentence_spans,
    strip_sources,
    tokenize,
)
from kg.extraction.relations import RelationRules
from kg.extraction.relatives import PlacedRules, RelativeRules
from kg.extraction.shapes import ShapeRules
from kg.extraction.spans import (
    appositive_at,
    is_negated,
    relative_subject,
    sentence_head,
    subject_end,
)
from kg.extraction.state import (
    AUX,
    VERSION_TOKEN,
    Cleaned,
    Scan,
    State,
)
from kg.extraction.types import ExtractedEdge, ExtractedEntity, Extraction

_HEADING = re.compile(r"\A\s*#\s+([\w.\-]+(?: [\w.\-]+){0,3})\s*$", re.MULTILINE)
_DOCUMENT_WORDS = re.compile(
    r"\s+(?:changelog|change log|release notes|readme|docs)$"
    r"|^(?:changelog|change log|release notes) for\s+",
    re.I,
)
_FIRST_PERSON = {"i", "we", "i'm", "we're", "i've", "we've", "i’m", "we’re"}  # noqa: RUF001
_HANDLE = re.compile(r"(?<![\w.@/])@([A-Za-z0-9](?:[\w-]*[A-Za-z0-9])?)\b(?![.@]\w)")


_MODALS = {"would", "might", "perhaps", "eventually", "someday"}
_PLAN_OPENING = re.compile(r"[\s*_>-]*(?:next(?: up| step)?|todo|maybe|plan|idea)\b", re.I)
_WISHES = {"want", "wants", "plan", "plans", "planning", "hope", "hoping", "going"}


def _hypothetical(toks: list[Tok], sentence: str) -> bool:
    """A wish, plan or possibility: "would be simpler on X", "want to try Y", "TODO: use Z"."""
    lows = [t.low for t in toks]
    if _PLAN_OPENING.match(sentence):
        return True
    if any(w in _MODALS for w in lows):
        return True
    return any(a in _WISHES and b == "to" for a, b in itertools.pairwise(lows))


class HeuristicExtractor(
    RelationRules,
    ShapeRules,
    MigrationRules,
    InstrumentRules,
    MentionRules,
    RelativeRules,
    PlacedRules,
):
    def __init__(
        self, *, max_entities: int = 20, max_edges: int = 30, entity_conf: float = 0.7,
        edge_conf: float = 0.6,
    ) -> None:  # fmt: skip
        self.max_entities = max_entities
        self.max_edges = max_edges
        self.entity_conf = entity_conf
        self.edge_conf = edge_conf

    def extract(self, text: str) -> Extraction:
        text = strip_sources(text)
        seen: dict[str, str] = {}  # lower name -> surface form of every phrase around a verb
        names: dict[str, str] = {}  # the ones kept: in a relation, or names by their spelling
        types: dict[str, str] = {}
        edges: dict[tuple[str, str], str] = {}
        state = State()
        relational: set[str] = set()
        self._document_topic(text, seen, names, types, edges, state, relational)
        self._handles(text, seen, names, types, relational)
        spans = sentence_spans(text)
        required = required_items(text)
        for toks in join_colon_lists(tokenize(text), text):
            sent = Sentence(toks, text)
            state.sentence = next(
                (text[a:b] for a, b in spans if a <= toks[0].start < b),
                text[toks[0].start : toks[-1].end],
            )
            if state.sentence.rstrip().endswith("?") or _hypothetical(toks, state.sentence):
                # "Could the client fall back to X here?", "should move it to Cloudflare
                # eventually": a question, a wish or a plan states no relation.
                self._standalone(sent, names, types)
                continue
            if toks[0].start in required:
                self._required(sent, seen, edges, state, required[toks[0].start])
            self._minimum(sent, seen, edges, state)
            self._relations(sent, seen, types, edges, state)
            # A phrase becomes an entity only when it completes a relation: "the plan" in
            # "Nothing is part of the plan" does not.
            for pair in edges:
                for key in pair:
                    names.setdefault(key, seen[key])
                    relational.add(key)
            self._standalone(sent, names, types)
        if state.topic is not None and state.topic in names and types.get(state.topic) == "project":
            kind = described_kind(names[state.topic], text)  # "tallow is a small OCaml library"
            types[state.topic] = kind or "project"
        return self._finish(
            names,
            types,
            edges,
            relational - state.indefinite,
            state.evidence,
            state.explicit,
            text,
        )

    def _document_topic(
        self,
        text: str,
        seen: dict[str, str],
        names: dict[str, str],
        types: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
        relational: set[str],
    ) -> None:
        """What the whole passage is about, from its heading or its first lines (a log, release
        notes, a gloss, a first-person note): the subject of sentences that name none."""
        heading = _HEADING.search(text)
        # "# vaultkey changelog": the project is vaultkey, the rest says which document this is.
        title = _DOCUMENT_WORDS.sub("", heading.group(1)) if heading else ""
        if heading and clean(title):
            state.topic = title.lower()
            state.titled = True
            seen[state.topic] = title
            names[state.topic] = title
            types[state.topic] = "project"
            relational.add(state.topic)
        if state.topic is None and (
            logged := log_topic(text)
            or release_topic(text)
            or glossed_topic(text)
            or first_person_topic(text)
        ):
            state.topic = logged.lower()  # "day 12 on the weather station": what the log is about
            state.titled = True
            seen[state.topic] = names[state.topic] = logged
            types[state.topic] = "project"
            relational.add(state.topic)
            if (platform := release_platform(text)) is not None:
                seen[platform.lower()] = platform
                edges[(state.topic, platform.lower())] = "runs_on"
                state.evidence[(state.topic, platform.lower())] = text.split("\n", 1)[0].lstrip(
                    "# "
                )

    @staticmethod
    def _handles(
        text: str,
        seen: dict[str, str],
        names: dict[str, str],
        types: dict[str, str],
        relational: set[str],
    ) -> None:
        for handle in _HANDLE.findall(text):
            key = handle.lower()  # "thanks @ravi-s": a person, named without the "@"
            seen.setdefault(key, handle)
            names.setdefault(key, handle)
            types[key] = "person"
            relational.add(key)

    def _finish(
        self,
        names: dict[str, str],
        types: dict[str, str],
        edges: dict[tuple[str, str], str],
        relational: set[str],
        evidence: dict[tuple[str, str], str],
        explicit: set[str],
        text: str = "",
    ) -> Extraction:
        """Every phrase through ``names.clean``: kind nouns and modifiers off, possessives split,
        fragments refused; edges follow their ends, and go when an end goes."""
        done = Cleaned()
        for key, surface in names.items():
            clean_name(done, key, surface, types, relational, evidence, explicit, text)
        # What a name no list knows is, when its spelling says nothing: the role it plays as
        # the object of a relation ("written in X": a technology; "calls X": a service).
        roles: dict[str, str] = {}
        for (s, t), rel in edges.items():
            if (mt := done.mapping.get(t)) and done.mapping.get(s) != mt:
                roles.setdefault(mt, rel)
            if rel == "replaced_by" and (ms := done.mapping.get(s)):
                roles.setdefault(ms, rel)  # what was replaced is of the kind of what replaced it
        entities = [
            ExtractedEntity(
                name, _type(name, done.types.get(key), text, roles.get(key)), self.entity_conf
            )
            for key, name in done.final.items()
        ][: self.max_entities]
        kept = {e.name.lower() for e in entities}
        out, said = kept_edges(done, edges, evidence, kept)
        edge_list = [
            ExtractedEdge(done.final[s], done.final[t], rel, self.edge_conf, evidence=said[(s, t)])
            for (s, t), rel in out.items()
        ][: self.max_edges]
        return Extraction("heuristic", "heuristic-v3", entities, edge_list)

    def _relations(
        self,
        sent: Sentence,
        names: dict[str, str],
        types: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
    ) -> None:
        self._from_to(sent, names, edges, state)
        self._copula(sent, names, edges, state)
        self._apposed(sent, names, edges, state)
        self._apposed_after(sent, names, edges, state)
        self._passive_tool(sent, names, edges, state)
        self._used_for(sent, names, edges, state)
        if (pair := paired_on(sent)) is not None:
            person, thing = (self._name(sent, span, names) for span in pair)
            if _looks_like_person(names[person]):
                types[person] = "person"  # "paired with Teodora on the export job"
                self._connect(edges, state, person, thing, "works_on")
        scan = Scan(last_object=state.last_object)
        i = 0
        while i < len(sent.toks):
            i = self._relation_at(sent, i, scan, names, types, edges, state)
        self._object_relatives(sent, names, edges, state)
        self._placed_on(sent, names, edges, state)
        self._glossed_runtime(sent, names, edges, state)
        self._instruments(sent, names, edges, state)
        self._mentions(sent, names, edges, state)

    def _relation_at(
        self,
        sent: Sentence,
        i: int,
        scan: Scan,
        names: dict[str, str],
        types: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
    ) -> int:
        """The relation whose verb starts at token ``i``, if any: its subjects, its objects and
        the edges between them. Returns where scanning resumes."""
        toks = sent.toks
        found = sent.verb_at(i)
        if found is None or not sent.verb_within(i):
            return i + 1
        pattern, after, particle = found
        if toks[i].low in ("called", "named") and i > 0 and name_word(toks[i - 1]):
            return self._naming(sent, i, names, edges, state)
        k = subject_end(sent, i)
        negated = is_negated(sent, k, i)
        before = self._subject_phrase(sent, k, names, state)
        if (it := self._it_is_a(sent, before, state)) is not None:
            scan.subjects = [it]  # "It is a Haskell program built with brick": not "program"
        else:
            self._choose_subjects(sent, k, before, scan, names, state)
        start = particle + 1 if particle is not None else after
        objects, i = self._objects(sent, start, pattern, names, scan.last_object)
        clause_from, scan.clause_start = scan.clause_start, i
        if pattern.words[0] in ARROWS or "_" in pattern.words[0]:
            state.explicit.update(x for x in (*scan.subjects, *objects) if x)
        back = relative_subject(sent, k, before, clause_from, scan, names)
        if back is not None and relative_antecedent(sent, k) is None:
            scan.subjects = [back]  # "Supabase, which handles auth and stores logs in"
        if not pattern.reverse and (agent := passive_agent(sent, k, i)) is not None:
            scan.subjects = [self._name(sent, agent, names)]  # "shipped to Loki by Vector"
            if (origin := passive_source(sent, k)) is not None:
                source = self._name(sent, origin, names)
                self._connect(edges, state, scan.subjects[0], source, "reads_from")
        scan.subjects = self._implied(scan.subjects, names, state, pattern)
        if pattern.reverse and k == 0 and toks[0].text[:1].isupper() and not scan.subjects:
            # "Maintained by the SRE Guild.": of the project (not "(needed by psycopg)")
            scan.subjects = [state.topic] if state.topic else []
        if len(scan.subjects) == 1 and scan.subjects[0]:
            state.last_subject = scan.subjects[0]
        if objects and not negated and not pattern.two_objects:
            self._instead(sent, i, objects[-1], names, edges, state)
        if not negated and objects:
            self._link(pattern, objects, scan, names, types, edges, state)
            if not pattern.reverse and not pattern.two_objects:
                self._carrier(sent, i, scan, names, edges, state)
        return i

    def _subject_phrase(
        self, sent: Sentence, k: int, names: dict[str, str], state: State
    ) -> tuple[int, int] | None:
        """The phrase before the verb. "X is a bookkeeping API written in Go": the subject is
        X, not "a bookkeeping API"; an indefinite phrase with nothing before it is noted as such."""
        toks = sent.toks
        before = sent.phrase_before(k)
        if before is not None and before[0] >= 1 and toks[before[0] - 1].low in ("a", "an"):
            a = before[0] - 1
            # "Saleor, a commerce platform written in Python", "harbor-beats, is a BEATs model
            # trained on": the name set off by the comma is what the participle speaks of.
            b = a - 1 if a >= 1 and toks[a - 1].low in AUX else a
            while b >= 1 and b < a and toks[b - 1].low in ("itself", "themselves"):
                b -= 1  # "The fleet manager itself is a Python service owned by"
            b = b - 1 if b >= 1 and toks[b - 1].text == "," else b
            if a >= 2 and toks[a - 1].low in AUX and sent.phrase_before(a - 1) is not None:
                before = sent.phrase_before(a - 1)
            elif b < a and (named := sent.phrase_before(b)) is not None and named[1] == b:
                before = named
            else:
                self._name(sent, before, names)
                state.indefinite.add(sent.span(*before).lower())
        if before is not None and (owned_part(sent, before) or capitalised_noun(sent, before)):
            state.owned.add(self._name(sent, before, names))
        return before

    @staticmethod
    def _it_is_a(sent: Sentence, before: tuple[int, int] | None, state: State) -> str | None:
        """What "it" stands for when the phrase before the verb is the indefinite complement
        of "it is a": "It is a Go binary written in ..." says something of "it"."""
        if before is None or before[0] < 2 or sent.toks[before[0] - 1].low not in ("a", "an"):
            return None
        a = before[0] - 1
        toks = sent.toks
        copula = toks[a - 1].low in ("it's", "it’s") or (  # noqa: RUF001
            a >= 2 and toks[a - 1].low in ("is", "was") and toks[a - 2].low == "it"
        )
        return (state.last_subject or state.topic) if copula else None

    def _choose_subjects(
        self,
        sent: Sentence,
        k: int,
        before: tuple[int, int] | None,
        scan: Scan,
        names: dict[str, str],
        state: State,
    ) -> None:
        """The verb's subjects: the phrase before it (and those joined to it), an appositive,
        what "which" or "it" refers to. With none of these, the last clause's subjects stay."""
        toks = sent.toks
        if before is not None and before[0] >= scan.clause_start:
            scan.subjects = self._subjects(sent, before, scan.clause_start, names)
        elif before is not None:
            scan.subjects = [self._name(sent, before, names)]  # "A -> B -> C": B goes on
        elif (appositive := appositive_at(sent, k)) is not None:
            scan.subjects = [self._name(sent, appositive, names)]  # "The lead, Maria, manages"
        elif (headed := headed_participle(sent, k)) is not None:
            scan.subjects = [self._name(sent, headed, names)]  # "New async client, built on X"
        elif (antecedent := relative_antecedent(sent, k)) is not None:
            scan.subjects = [self._name(sent, antecedent, names)]  # "by the X job, which writes"
        elif k > 0 and toks[k - 1].low in RELATIVE and scan.last_object:
            scan.subjects = [scan.last_object]  # "the auth API, which depends on Redis"
        elif k > 0 and toks[k - 1].low in PRONOUNS:
            head = sentence_head(sent, k - 1)
            it = (self._name(sent, head, names) if head else None) or state.last_subject
            it = it or state.topic
            scan.subjects = [it] if toks[k - 1].low == "it" and it else []
            if toks[k - 1].low in _FIRST_PERSON and state.titled and state.topic:
                scan.subjects = [state.topic]  # a log of its project: "we're using bump.lua"

    def _standalone(self, sent: Sentence, names: dict[str, str], types: dict[str, str]) -> None:
        """Names outside relations, by spelling only: technical tokens anywhere, capitalised
        words in mid-sentence (runs of them form one name: "Travis CI")."""
        toks = sent.toks
        i = 0
        while i < len(toks):
            tok = toks[i]
            if not name_word(tok) or tok.low in NOT_NAMES or determiner(tok):
                i += 1
                continue
            technical = is_technical(tok.text) or known_lower(tok.text)
            capital = tok.text[:1].isupper() and not tok.first
            if tok.first and tok.text[:1].isupper() and i + 1 < len(toks):
                # "Docker Compose runs ...": a run of capitalised words is a name even first.
                nxt = toks[i + 1]
                capital = name_word(nxt) and nxt.text[:1].isupper() and nxt.low not in NOT_NAMES
            if not (technical or capital):
                i += 1
                continue
            j = i + 1
            while (
                j < len(toks)
                and name_word(toks[j])
                and (
                    toks[j].text[:1].isupper()
                    or is_technical(toks[j].text)
                    or toks[j].text == "&"
                    or toks[j].low in HEAD_TYPES
                    or VERSION_TOKEN.fullmatch(toks[j].text) is not None
                )
            ):
                j += 1
            while j > i + 1 and toks[j - 1].text == "&":
                j -= 1
            surface = sent.span(i, j)
            key = surface.lower()
            if not any(key in other or other in key for other in names if names):
                names[key] = surface
            i = j
