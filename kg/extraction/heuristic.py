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

import re
from dataclasses import dataclass, field

from kg.extraction.clauses import (
    first_person_topic,
    glossed_topic,
    headed_participle,
    join_colon_lists,
    log_topic,
    minimum_requirement,
    paired_on,
    passive_agent,
    passive_source,
    relative_antecedent,
    release_platform,
    release_topic,
)
from kg.extraction.entity_types import PERSON_CUE as _PERSON_CUE
from kg.extraction.entity_types import context_type as _context_type
from kg.extraction.entity_types import entity_type as entity_type
from kg.extraction.entity_types import looks_like_person as _looks_like_person
from kg.extraction.entity_types import resolve_type as _type
from kg.extraction.lexicon import (
    ARROWS,
    HEAD_TYPES,
    NOT_NAMES,
    PERSON_OBJECT_RELATIONS,
    PERSON_SUBJECT_RELATIONS,
    PRONOUNS,
    VerbPattern,
    canonical,
)
from kg.extraction.names import KIND_NOUNS, clean, known_lower, known_type, name_like
from kg.extraction.nouns import common_noun, english_word, marked_as_name
from kg.extraction.phrases import (
    RELATIVE,
    Sentence,
    between_subject_and_verb,
    determiner,
    is_technical,
    name_word,
    pronoun_at,
    sentence_spans,
    strip_sources,
    tokenize,
)
from kg.extraction.types import ExtractedEdge, ExtractedEntity, Extraction

_HEADING = re.compile(r"\A\s*#\s+([\w.\-]+(?: [\w.\-]+){0,3})\s*$", re.MULTILINE)
_DOCUMENT_WORDS = re.compile(r"\s+(?:changelog|change log|release notes|readme|docs)$", re.I)
AUX = {"is", "are", "was", "were"}
_DOMAIN = re.compile(r"(?:[\w-]+\.)+(?:com|org|net|dev|co|uk|de|fr|nl|eu|app|me)", re.I)
_HANDLE = re.compile(r"(?<![\w.@/])@([A-Za-z0-9](?:[\w-]*[A-Za-z0-9])?)\b(?![.@]\w)")
# A version written right after a name is part of it: "PostgreSQL 16", "Python 3.9+", "Mistral 7B".
_VERSION_TOKEN = re.compile(r"v?\d+(?:\.\d+)*\+?|\d+[bB]|LTS", re.IGNORECASE)
MIGRATION_VERBS = {
    "moved", "move", "moves", "moving", "migrated", "migrate", "migrates", "migrating",
    "switched", "switch", "switches", "switching", "ported", "port", "ports", "porting", "went",
    "transitioned", "converted", "cut",
}  # fmt: skip


@dataclass
class _State:
    """What one passage's sentences share: the topic (a README's title), the last subject and
    object for "it" and "which", phrases seen only indefinitely, and each edge's sentence."""

    topic: str | None = None
    last_subject: str | None = None
    last_object: str | None = None
    sentence: str = ""
    indefinite: set[str] = field(default_factory=set)
    owned: set[str] = field(default_factory=set)  # "its core solver": a part of the topic
    explicit: set[str] = field(default_factory=set)  # ends of "a -> b" and snake_case relations
    evidence: dict[tuple[str, str], str] = field(default_factory=dict)


@dataclass
class _Scan:
    """What one sentence's relations share while it is scanned verb by verb: the subjects of the
    last clause, where its objects ended (no subject reaches past that), and its last object."""

    subjects: list[str] = field(default_factory=list)
    clause_start: int = 0
    last_object: str | None = None


@dataclass
class _Cleaned:
    """What ``_finish`` makes of the raw phrases: the clean names (lower -> surface) and the
    types the relations hinted for them, what each raw phrase became (``None``: refused), and
    the edges and evidence a possessive adds ("Quillstack's search service")."""

    final: dict[str, str] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    mapping: dict[str, str | None] = field(default_factory=dict)
    extra: dict[tuple[str, str], str] = field(default_factory=dict)
    extra_evidence: dict[tuple[str, str], str] = field(default_factory=dict)


class HeuristicExtractor:
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
        state = _State()
        relational: set[str] = set()
        heading = _HEADING.search(text)
        # "# vaultkey changelog": the project is vaultkey, the rest says which document this is.
        title = _DOCUMENT_WORDS.sub("", heading.group(1)) if heading else ""
        if heading and clean(title):
            state.topic = title.lower()
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
            seen[state.topic] = names[state.topic] = logged
            types[state.topic] = "project"
            relational.add(state.topic)
            if (platform := release_platform(text)) is not None:
                seen[platform.lower()] = platform
                edges[(state.topic, platform.lower())] = "runs_on"
                state.evidence[(state.topic, platform.lower())] = text.split("\n", 1)[0].lstrip(
                    "# "
                )
        for handle in _HANDLE.findall(text):
            key = handle.lower()  # "thanks @ravi-s": a person, named without the "@"
            seen.setdefault(key, handle)
            names.setdefault(key, handle)
            types[key] = "person"
            relational.add(key)
        spans = sentence_spans(text)
        required = _required_items(text)
        for toks in join_colon_lists(tokenize(text), text):
            sent = Sentence(toks, text)
            state.sentence = next(
                (text[a:b] for a, b in spans if a <= toks[0].start < b),
                text[toks[0].start : toks[-1].end],
            )
            if toks[0].start in required:
                self._required(sent, seen, edges, state)
            self._minimum(sent, seen, edges, state)
            self._relations(sent, seen, types, edges, state)
            # A phrase becomes an entity only when it completes a relation: "the plan" in
            # "Nothing is part of the plan" does not.
            for pair in edges:
                for key in pair:
                    names.setdefault(key, seen[key])
                    relational.add(key)
            self._standalone(sent, names, types)
        return self._finish(
            names,
            types,
            edges,
            relational - state.indefinite,
            state.evidence,
            state.explicit,
            text,
        )

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
        done = _Cleaned()
        for key, surface in names.items():
            _clean_name(done, key, surface, types, relational, evidence, explicit, text)
        entities = [
            ExtractedEntity(name, _type(name, done.types.get(key), text), self.entity_conf)
            for key, name in done.final.items()
        ][: self.max_entities]
        kept = {e.name.lower() for e in entities}
        out, said = _kept_edges(done, edges, evidence, kept)
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
        state: _State,
    ) -> None:
        self._from_to(sent, names, edges, state)
        self._copula(sent, names, edges, state)
        self._apposed(sent, names, edges, state)
        if (pair := paired_on(sent)) is not None:
            person, thing = (self._name(sent, span, names) for span in pair)
            if _looks_like_person(names[person]):
                types[person] = "person"  # "paired with Teodora on the export job"
                self._edge(edges, person, thing, "works_on")
                state.evidence.setdefault((person, thing), state.sentence)
        scan = _Scan(last_object=state.last_object)
        i = 0
        while i < len(sent.toks):
            i = self._relation_at(sent, i, scan, names, types, edges, state)

    def _relation_at(
        self,
        sent: Sentence,
        i: int,
        scan: _Scan,
        names: dict[str, str],
        types: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: _State,
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
        k = _subject_end(sent, i)
        negated = _negated(sent, k, i)
        before = self._subject_phrase(sent, k, names, state)
        self._choose_subjects(sent, k, before, scan, names, state)
        start = particle + 1 if particle is not None else after
        objects, i = self._objects(sent, start, pattern, names, scan.last_object)
        clause_from, scan.clause_start = scan.clause_start, i
        if pattern.words[0] in ARROWS or "_" in pattern.words[0]:
            state.explicit.update(x for x in (*scan.subjects, *objects) if x)
        back = _relative_subject(sent, k, before, clause_from, scan, names)
        if back is not None and relative_antecedent(sent, k) is None:
            scan.subjects = [back]  # "Supabase, which handles auth and stores logs in"
        if not pattern.reverse and (agent := passive_agent(sent, k, i)) is not None:
            scan.subjects = [self._name(sent, agent, names)]  # "shipped to Loki by Vector"
            if (origin := passive_source(sent, k)) is not None:
                self._edge(edges, scan.subjects[0], self._name(sent, origin, names), "reads_from")
                state.evidence.setdefault(
                    (scan.subjects[0], sent.span(*origin).lower()), state.sentence
                )
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

    def _carrier(
        self,
        sent: Sentence,
        i: int,
        scan: _Scan,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: _State,
    ) -> None:
        """ "posts readings to Home Assistant over MQTT", "calls it over gRPC": the protocol
        or format named after "over" is one the relation's subject uses."""
        toks = sent.toks
        if i + 1 >= len(toks) or toks[i].low != "over":
            return
        span = sent.phrase_after(i + 1)
        found = clean(sent.span(*span)) if span is not None else None
        if span is None or found is None or known_type(found) != "technology":
            return
        key = self._name(sent, span, names)
        for subject in scan.subjects:
            if subject:
                self._edge(edges, subject, key, "uses")
                state.evidence.setdefault((subject, key), state.sentence)

    def _subject_phrase(
        self, sent: Sentence, k: int, names: dict[str, str], state: _State
    ) -> tuple[int, int] | None:
        """The phrase before the verb. "X is a bookkeeping API written in Go": the subject is
        X, not "a bookkeeping API"; an indefinite phrase with nothing before it is noted as such."""
        toks = sent.toks
        before = sent.phrase_before(k)
        if before is not None and before[0] >= 1 and toks[before[0] - 1].low in ("a", "an"):
            a = before[0] - 1
            if a >= 2 and toks[a - 1].low in AUX and sent.phrase_before(a - 1) is not None:
                before = sent.phrase_before(a - 1)
            else:
                self._name(sent, before, names)
                state.indefinite.add(sent.span(*before).lower())
        if before is not None and (_owned_part(sent, before) or _capitalised_noun(sent, before)):
            state.owned.add(self._name(sent, before, names))
        return before

    def _choose_subjects(
        self,
        sent: Sentence,
        k: int,
        before: tuple[int, int] | None,
        scan: _Scan,
        names: dict[str, str],
        state: _State,
    ) -> None:
        """The verb's subjects: the phrase before it (and those joined to it), an appositive,
        what "which" or "it" refers to. With none of these, the last clause's subjects stay."""
        toks = sent.toks
        if before is not None and before[0] >= scan.clause_start:
            scan.subjects = self._subjects(sent, before, scan.clause_start, names)
        elif before is not None:
            scan.subjects = [self._name(sent, before, names)]  # "A -> B -> C": B goes on
        elif (appositive := _appositive(sent, k)) is not None:
            scan.subjects = [self._name(sent, appositive, names)]  # "The lead, Maria, manages"
        elif (headed := headed_participle(sent, k)) is not None:
            scan.subjects = [self._name(sent, headed, names)]  # "New async client, built on X"
        elif (antecedent := relative_antecedent(sent, k)) is not None:
            scan.subjects = [self._name(sent, antecedent, names)]  # "by the X job, which writes"
        elif k > 0 and toks[k - 1].low in RELATIVE and scan.last_object:
            scan.subjects = [scan.last_object]  # "the auth API, which depends on Redis"
        elif k > 0 and toks[k - 1].low in PRONOUNS:
            head = _sentence_head(sent, k - 1)
            it = (self._name(sent, head, names) if head else None) or state.last_subject
            it = it or state.topic
            scan.subjects = [it] if toks[k - 1].low == "it" and it else []

    def _link(
        self,
        pattern: VerbPattern,
        objects: list[str],
        scan: _Scan,
        names: dict[str, str],
        types: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: _State,
    ) -> None:
        """The edges of one relation: "replaced X with Y" links its two objects, any other
        verb each subject to each object. The last object is what "which" refers to next."""
        if pattern.two_objects:
            if len(objects) > 1:
                first, second = objects[0], objects[1]
                scan.last_object = state.last_object = second
                if pattern.relation == "replaced_by" and not (
                    _replaceable(names[first]) and _replaceable(names[second])
                ):
                    return  # "replaced the hand-rolled http code with Retrofit": no named old end
                self._edge(edges, first, second, pattern.relation)
                state.evidence.setdefault((first, second), state.sentence)
            return
        # A relation the writer spelled in snake_case is kept as written; a verb's is mapped
        # to the moderators' vocabulary, some with their ends swapped ("X contains Y").
        written = "_" in pattern.words[0]
        rel, flip = (pattern.relation, False) if written else canonical(pattern.relation)
        for subject in scan.subjects:
            for obj in objects:
                src, dst = (obj, subject) if pattern.reverse else (subject, obj)
                self._types(src, dst, pattern.relation, names, types)
                src, dst = (dst, src) if flip else (src, dst)
                self._edge(edges, src, dst, rel)
                state.evidence.setdefault((src, dst), state.sentence)
        scan.last_object = state.last_object = objects[-1]

    @staticmethod
    def _implied(
        subjects: list[str], names: dict[str, str], state: _State, pattern: VerbPattern
    ) -> list[str]:
        """A subject that is no name ("The frontend", "Plots", "HTTP routing", none at all in
        "Written in Go.") stands for what the passage is about: a README's title, or the name
        the first relation of the passage started from."""
        kept = [
            key
            for key in subjects
            if key and (key in state.explicit or clean(names.get(key, key)) is not None)
        ]
        if (
            state.topic
            and kept
            and all(
                (_bare(names.get(k, k)) or k in state.owned) and k not in state.explicit
                for k in kept
            )
        ):
            kept = []  # "The frontend is served by Caddy": the README's project is
        if kept:
            if state.topic is None and len(kept) == 1 and _strong(names.get(kept[0], "")):
                state.topic = kept[0]
            return kept
        if pattern.reverse or pattern.two_objects or state.topic is None:
            return []
        return [state.topic]

    def _copula(
        self,
        sent: Sentence,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: _State,
    ) -> None:
        """ "Checkout is a Rails app, which ...", "It's a Laravel app": the name before "is a" is
        what "which" and "it" refer to, and a known framework or language before a kind noun is
        what it is built with."""
        toks = sent.toks
        for k in range(len(toks) - 1):
            if (
                k
                and toks[k].low in ("is", "are")
                and toks[k + 1].low not in ("a", "an", "not", "no")
            ):
                self._made_of(sent, k, names, edges, state)
                continue
            if toks[k].low not in ("is", "'s", "are", "it's") or toks[k + 1].low not in ("a", "an"):
                continue
            before = sent.phrase_before(k) if k else None
            if toks[k].low == "it's" and (state.last_subject or state.topic):
                subject = state.last_subject or state.topic or ""  # "It's a Laravel app"
            elif before is not None and before[1] == k:
                subject = self._name(sent, before, names)
                if _owned_part(sent, before):
                    state.owned.add(subject)
                if clean(names[subject]) is None:
                    return
            elif (
                k > 0 and toks[k - 1].low in ("it", "it's") and (state.last_subject or state.topic)
            ):
                subject = state.last_subject or state.topic or ""
            else:
                return
            if state.topic is None and _strong(names.get(subject, "")):
                state.topic = subject
            if state.topic and (_bare(names.get(subject, subject)) or subject in state.owned):
                subject = state.topic  # "The frontend is a small Svelte app": the project's
            state.last_object = subject
            span = sent.phrase_after(k + 2)
            if span is None:
                return
            words = sent.span(*span).split()
            head_kind = words[-1].lower() in KIND_NOUNS or words[-1].lower() in HEAD_TYPES
            tech = _known_tech(words)
            if head_kind and tech is not None:
                key = tech.lower()
                names.setdefault(key, tech)
                self._edge(edges, subject, key, "built_with")
                state.evidence.setdefault((subject, key), state.sentence)
            return

    def _apposed(
        self,
        sent: Sentence,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: _State,
    ) -> None:
        """ "Our Rails monolith, Larder, talks to ...", "my budgeting tool, Coinjar": a name set
        beside a kind noun after a known framework or language is built with it."""
        toks = sent.toks
        for c in range(1, len(toks) - 1):
            if toks[c].text != ",":
                continue
            kind = sent.phrase_before(c)
            named = sent.phrase_after(c + 1)
            if kind is None or named is None or kind[1] != c or named[0] != c + 1:
                continue
            if named[1] < len(toks) and toks[named[1]].text not in (",", "."):
                continue
            words = sent.span(*kind).split()
            tech = _known_tech(words)
            head = words[-1].lower()
            surface = sent.span(*named)
            if tech is None or not (head in KIND_NOUNS or head in HEAD_TYPES):
                continue
            if not _apposed_name(surface) or clean(surface) is None:
                continue
            key = self._name(sent, named, names)
            names.setdefault(tech.lower(), tech)
            self._edge(edges, key, tech.lower(), "built_with")
            state.evidence.setdefault((key, tech.lower()), state.sentence)

    def _made_of(
        self,
        sent: Sentence,
        k: int,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: _State,
    ) -> None:
        """ "The engine is Unity 2022 LTS", "everything else is NumPy and SciPy": a part of the
        passage's project that *is* a known language, framework or engine means the project is
        built with it. Only with a topic, and only when the subject is not itself a name."""
        if state.topic is None:
            return
        toks = sent.toks
        before = sent.phrase_before(k)
        said = clean(sent.span(*before)) if before is not None else None
        if said is not None and _strong(said):
            return  # "Redis is ...": a statement about a name, not about the project's parts
        j = k + 1
        found: list[str] = []
        while j < len(toks):
            span = sent.phrase_after(j)
            if span is None:
                break
            surface = clean(sent.span(*span))
            if surface is None or _type(surface, None, "") not in ("library", "technology"):
                break
            if known_type(surface) is None and known_type(surface.split()[0]) is None:
                break
            key = self._name(sent, span, names)
            found.append(key)
            j = span[1]
            if j < len(toks) and toks[j].low in ("and", ",", "+"):
                j += 1
                continue
            break
        for key in found:
            self._edge(edges, state.topic, key, "built_with")
            state.evidence.setdefault((state.topic, key), state.sentence)

    def _naming(
        self,
        sent: Sentence,
        i: int,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: _State,
    ) -> int:
        """ "a small Rust crate called fathom-csv": "called" names, it does not call. The name
        is what the passage is about; a known language or framework before the kind noun is
        what it is built with."""
        span = sent.phrase_after(i + 1)
        if span is None:
            return i + 1
        named = self._name(sent, span, names)
        if clean(names[named]) is None:
            return span[1]
        state.topic = state.topic or named
        state.last_subject = state.last_object = named
        before = sent.phrase_before(i)
        if before is not None:
            words = sent.span(*before).split()
            tech = next((w for w in words[:-1] if known_type(w) in ("library", "technology")), None)
            if tech is not None and words[-1].lower() in KIND_NOUNS | set(HEAD_TYPES):
                key = tech.lower()
                names.setdefault(key, tech)
                self._edge(edges, named, key, "built_with")
                state.evidence.setdefault((named, key), state.sentence)
        return max(span[1], i + 1)

    def _from_to(
        self,
        sent: Sentence,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: _State,
    ) -> None:
        """ "I moved the blog from Nikola to Hugo": a migration verb, then "from X to Y" with
        both ends names (versions and metrics are refused as names, so ranges are not)."""
        toks = sent.toks
        verb = next((k for k, t in enumerate(toks) if t.low in MIGRATION_VERBS), None)
        if verb is None:
            return
        for k in range(verb + 1, len(toks)):
            if toks[k].low != "from" or (k == verb + 1):
                continue
            first = sent.phrase_after(k + 1)
            if first is None or first[1] >= len(toks) or toks[first[1]].low != "to":
                return
            second = sent.phrase_after(first[1] + 1)
            if second is None:
                return
            old, new = self._name(sent, first, names), self._name(sent, second, names)
            if _migratable(names[old]) and _migratable(names[new]):
                self._edge(edges, old, new, "replaced_by")
                state.evidence.setdefault((old, new), state.sentence)
            return

    def _required(
        self,
        sent: Sentence,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: _State,
    ) -> None:
        """ "## Requirements" then "- Python 3.11 or newer": the item's leading name is what the
        README's project depends on."""
        span = sent.phrase_after(0)
        if state.topic is None or span is None or span[0] != 0:
            return
        key = self._name(sent, span, names)
        # Under that heading a bare lower-case word is a package ("libvips"), if no generic noun.
        if clean(names[key]) is not None:
            self._edge(edges, state.topic, key, "depends_on")
            state.evidence.setdefault((state.topic, key), state.sentence)

    def _minimum(
        self,
        sent: Sentence,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: _State,
    ) -> None:
        """ "The minimum is now Django 4.2": the passage's project depends on that version."""
        found = minimum_requirement(sent.span(0, len(sent.toks)))
        if state.topic is None or found is None or clean(found) is None:
            return
        key = found.lower()
        names.setdefault(key, found)
        self._edge(edges, state.topic, key, "depends_on")
        state.evidence.setdefault((state.topic, key), state.sentence)

    def _instead(
        self,
        sent: Sentence,
        i: int,
        new: str,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: _State,
    ) -> None:
        """ "... through Amazon SES instead of Mailgun", "rather than Postgres": old -> new."""
        toks = sent.toks
        j = i
        while j < len(toks) and j - i < 4 and toks[j].low not in ("instead", "rather"):
            if sent.verb_at(j) is not None:
                return
            j += 1
        if j + 1 >= len(toks) or (toks[j].low, toks[j + 1].low) not in (
            ("instead", "of"),
            ("rather", "than"),
        ):
            return
        j += 2
        # "instead of going through Celery", "rather than using cron": the gerund and its
        # preposition stand between the phrase and the name it replaces.
        if j < len(toks) and toks[j].low.endswith("ing") and toks[j].text.islower():
            j += 1
            if j < len(toks) and toks[j].low in ("through", "via", "with", "on", "to"):
                j += 1
        span = sent.phrase_after(j)
        if span is None:
            return
        old = self._name(sent, span, names)
        if _replaceable(names[old]) and _replaceable(names[new]):
            self._edge(edges, old, new, "replaced_by")
            state.evidence.setdefault((old, new), state.sentence)

    def _subjects(
        self, sent: Sentence, span: tuple[int, int], floor: int, names: dict[str, str]
    ) -> list[str]:
        """The subject phrase and any joined to it: "Priya and Omar manage ..."."""
        found = [self._name(sent, span, names)]
        k = span[0]
        while True:
            while k - 1 > floor and determiner(sent.toks[k - 1]):
                k -= 1
            if not (k - 1 > floor and sent.toks[k - 1].low in ("and", ",", "or")):
                break
            j = k - 1
            if sent.toks[j].low == "and" and j - 1 > floor and sent.toks[j - 1].text == ",":
                j -= 1
            prev = sent.phrase_before(j)
            if prev is None or prev[0] < floor:
                break
            found.insert(0, self._name(sent, prev, names))
            k = prev[0]
        return found

    def _objects(
        self,
        sent: Sentence,
        start: int,
        pattern: VerbPattern,
        names: dict[str, str],
        last_object: str | None,
    ) -> tuple[list[str], int]:
        """Objects of a verb: one phrase, or several joined by "and"/","/"or"; for
        "replaced X with Y" the two phrases. Returns them and where scanning resumes."""
        toks = sent.toks
        objects: list[str] = []
        i = start
        while i < len(toks):
            pronoun = pronoun_at(sent, i)
            if pronoun and last_object:
                objects.append(last_object)
                i += 1
            else:
                span = sent.phrase_after(i)
                if span is None:
                    break
                # A phrase followed by a verb is the next clause's subject, not an object.
                if objects and span[1] < len(toks) and sent.verb_at(span[1]) is not None:
                    break
                objects.append(self._name(sent, span, names))
                i = span[1]
            if pattern.two_objects and len(objects) == 1:
                if i < len(toks) and toks[i].low == pattern.two_objects:
                    i += 1
                    continue
                break
            if pattern.two_objects:
                break
            nxt = _next_conjunct(sent, i, pattern.particle)
            if nxt is None:
                break
            if nxt < len(toks) and sent.verb_at(nxt) is not None:
                return objects, nxt  # "uses A and reads from B": same subject
            i = nxt
        return objects, max(i, start + 1)

    def _name(self, sent: Sentence, span: tuple[int, int], names: dict[str, str]) -> str:
        surface = sent.span(*span)
        key = surface.lower()
        names.setdefault(key, surface)
        return key

    @staticmethod
    def _edge(edges: dict[tuple[str, str], str], src: str, dst: str, rel: str) -> None:
        if src != dst:
            edges.setdefault((src, dst), rel)

    @staticmethod
    def _types(src: str, dst: str, rel: str, names: dict[str, str], types: dict[str, str]) -> None:
        if rel in PERSON_SUBJECT_RELATIONS and _looks_like_person(names[src]):
            types[src] = "person"
        if (
            rel in PERSON_OBJECT_RELATIONS
            and types.get(src) == "person"  # "Ines manages Pablo", not "the team manages Kafka"
            and _looks_like_person(names[dst])
        ):
            types[dst] = "person"
        dst_head = names[dst].lower().split()[-1]
        if (
            rel == "part_of"
            and HEAD_TYPES.get(dst_head) == "team"
            and _looks_like_person(names[src])
        ):
            types[src] = "person"  # "Noor is part of the Trust & Safety team"
        # An unknown capitalised name something uses, needs or reads from is a technology.
        if (
            rel in ("uses", "depends_on", "reads_from", "calls")
            and names[dst][:1].isupper()
            and names[dst].lower().split()[-1] not in HEAD_TYPES
        ):
            types.setdefault(dst, "technology")

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
                    or _VERSION_TOKEN.fullmatch(toks[j].text) is not None
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


def _clean_name(
    done: _Cleaned,
    key: str,
    surface: str,
    types: dict[str, str],
    relational: set[str],
    evidence: dict[tuple[str, str], str],
    explicit: set[str],
    text: str,
) -> None:
    """One raw phrase into ``done``: its clean name and hinted type, and its owner's edge when
    it is written as a possessive."""
    owner, thing = _possessive(surface)
    cleaned = _cleaned(key, surface, thing, relational, explicit, text)
    done.mapping[key] = cleaned.lower() if cleaned else None
    if cleaned is None:
        return
    done.final.setdefault(cleaned.lower(), cleaned)
    if key in types and cleaned.lower() == key:
        done.types.setdefault(cleaned.lower(), types[key])
    if owner and (owned := clean(owner)) is not None and not _bare(owned):
        _owner_edge(done, key, owned, cleaned, evidence, text)


def _cleaned(
    key: str, surface: str, thing: str, relational: set[str], explicit: set[str], text: str
) -> str | None:
    """The clean name of a phrase, or ``None`` when it is refused: a fragment, a name outside
    any relation that does not look like one, or an identifier from code."""
    cleaned = clean(thing)
    if cleaned is None and key in explicit and len(surface) > 1:
        cleaned = surface  # "web -> api -> db": the writer drew these as nodes
    if cleaned is not None and key not in relational and not _strong(cleaned):
        cleaned = None
    if cleaned is not None and key not in relational and _title_noun(cleaned):
        cleaned = None  # "click Save", "Improved Performance": English words in Title Case
    if cleaned is not None and key not in explicit and _identifier(cleaned, text):
        cleaned = None  # "sync_tasks", "max_connections", "$EDITOR": code, not a thing
    if (
        cleaned is not None
        and key not in explicit
        and common_noun(cleaned)
        and not marked_as_name(cleaned, text)
    ):
        cleaned = None  # "retries", "payments": a moderator would reject an English noun alone
    if cleaned is not None and _DOMAIN.fullmatch(cleaned) and known_type(cleaned) is None:
        cleaned = None  # "example.com", "status.acme.org": an address, not a thing
    if cleaned is not None and re.search(r"(?:\]\(|://)" + re.escape(cleaned), text):
        cleaned = None  # a link's target: "[badge](https://img.shields.io/...)"
    return cleaned


def _owner_edge(
    done: _Cleaned,
    key: str,
    owned: str,
    cleaned: str,
    evidence: dict[tuple[str, str], str],
    text: str,
) -> None:
    """ "Quillstack's search service": the owner is a name too; a person owns the thing, anything
    else has it as a part. The edge's evidence is the sentence of any edge of the phrase."""
    done.final.setdefault(owned.lower(), owned)
    person = _looks_like_person(owned) and re.search(_PERSON_CUE.format(re.escape(owned)), text)
    rel = "owns" if person else "part_of"
    pair = (owned.lower(), cleaned.lower()) if rel == "owns" else (cleaned.lower(), owned.lower())
    if pair[0] != pair[1]:
        done.extra[pair] = rel
        done.extra_evidence[pair] = next((v for (a, b), v in evidence.items() if key in (a, b)), "")


def _kept_edges(
    done: _Cleaned,
    edges: dict[tuple[str, str], str],
    evidence: dict[tuple[str, str], str],
    kept: set[str],
) -> tuple[dict[tuple[str, str], str], dict[tuple[str, str], str]]:
    """The edges between kept names, by their clean ends (the relations' first, then the
    possessives'), and each one's evidence sentence."""
    out: dict[tuple[str, str], str] = {}
    said: dict[tuple[str, str], str] = {}
    for (s, t), rel in edges.items():
        ms, mt = done.mapping.get(s), done.mapping.get(t)
        if ms and mt and ms != mt and ms in kept and mt in kept:
            out.setdefault((ms, mt), rel)
            said.setdefault((ms, mt), evidence.get((s, t), ""))
    for pair, rel in done.extra.items():
        if pair[0] in kept and pair[1] in kept:
            out.setdefault(pair, rel)
            said.setdefault(pair, done.extra_evidence.get(pair, ""))
    return out, said


_REQUIREMENTS_HEADING = re.compile(
    r"\s*#{1,6}\s*(?:requirements|dependencies|prerequisites|requires)\b", re.IGNORECASE
)
_BULLET = re.compile(r"[ \t]*[-*+]\s+")


def _required_items(text: str) -> set[int]:
    """Where each list item under a "Requirements", "Dependencies" or "Prerequisites" heading
    starts (its first word)."""
    found: set[int] = set()
    under = False
    for line in re.finditer(r"[^\n]+", text):
        if re.match(r"\s*#{1,6}\s", line.group()):
            under = _REQUIREMENTS_HEADING.match(line.group()) is not None
        elif under and (item := _BULLET.match(line.group())):
            found.add(line.start() + item.end())
    return found


def _next_conjunct(sent: Sentence, i: int, particle: str | None) -> int | None:
    """Where the next object joined to the one ending at ``i`` starts, or None: "A, B and C",
    "A as well as B", "on A and on B" (the preposition repeated), and "A for caching and B for
    storage" (a purpose phrase after each, so the one after the first is passed over)."""
    toks = sent.toks
    n = len(toks)
    if i < n and toks[i].low == "for" and (span := sent.phrase_after(i + 1)) is not None:
        after = _next_conjunct(sent, span[1], particle)
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


def _subject_end(sent: Sentence, i: int) -> int:
    """ "the export worker also depends on", "should use", "doesn't use": the subject sits
    before a few adverbs and auxiliaries. Returns where it ends."""
    toks = sent.toks
    k = i
    while k > 0 and i - k < 3 and between_subject_and_verb(toks[k - 1]):
        k -= 1
    return k


def _negated(sent: Sentence, k: int, i: int) -> bool:
    """A "not", "never", "no" or "n't" just before the verb: "doesn't use" states no relation;
    nor does a verb after "instead of"."""
    toks = sent.toks
    if k >= 2 and (toks[k - 2].low, toks[k - 1].low) in (("instead", "of"), ("rather", "than")):
        return True  # "instead of going through Celery": the relation that was given up
    return any(
        t.low in ("not", "never", "no") or t.low.endswith(("n't", "n’t"))  # noqa: RUF001
        for t in toks[max(0, k - 2) : i]
    )


def _relative_subject(
    sent: Sentence,
    k: int,
    before: tuple[int, int] | None,
    clause_from: int,
    scan: _Scan,
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


def _appositive(sent: Sentence, k: int) -> tuple[int, int] | None:
    """A capitalised name between commas just before the verb: "The team lead, Maria, manages"."""
    toks = sent.toks
    if k < 3 or toks[k - 1].text != ",":
        return None
    span = sent.phrase_before(k - 1)
    if span is None or span[0] == 0 or toks[span[0] - 1].text != ",":
        return None
    return span if _apposed_name(sent.span(*span)) else None


def _apposed_name(surface: str) -> bool:
    """Set off by commas, a capitalised name ("Maria") or one lower-case word that is no English
    noun ("A Python CLI, drillbit, wraps ...")."""
    if surface[:1].isupper():
        return True
    return " " not in surface and clean(surface) is not None and not english_word(surface)


def _possessive(surface: str) -> tuple[str | None, str]:
    """ "Quillstack's search service" -> ("Quillstack", "search service"); "Vector's" -> Vector."""
    text = surface.replace("\u2019", "'")
    if "'s " in text:
        owner, _, thing = text.partition("'s ")
        return owner, thing
    return None, text.removesuffix("'s")


def _bare(surface: str) -> bool:
    """A bare common noun: "frontend", "payments", "lab" (not "nginx", "web-api", "S3")."""
    return surface.islower() and (
        surface in HEAD_TYPES or (surface.isalpha() and known_type(surface) is None)
    )


def _identifier(name: str, text: str) -> bool:
    """A snake_case word that is no table, or a name written as a shell variable."""
    if re.search(r"\$\{?" + re.escape(name) + r"\b", text):
        return True
    if " " in name or "_" not in name or "." in name or known_type(name) is not None:
        return False
    return _context_type(name, text) is None


def _strong(name: str) -> bool:
    """A name outside any relation must look like one by its spelling."""
    return any(name_like(w) for w in name.split())


def _sentence_head(sent: Sentence, pronoun: int) -> tuple[int, int] | None:
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
    return span if name is not None and not _bare(name) else None


def _capitalised_noun(sent: Sentence, span: tuple[int, int]) -> bool:
    """ "Physics now runs on Rapier": an English noun capitalised only because it starts the
    sentence names a part or concern of the passage's project, not a product."""
    tok = sent.toks[span[0]]
    if sent.toks[span[1] - 1].low in ("extra", "extras"):
        return True  # "the optional `otel` extra pulls in ...": a packaging option of the project
    return span[1] - span[0] == 1 and tok.first and tok.text.istitle() and common_noun(tok.low)


def _owned_part(sent: Sentence, span: tuple[int, int]) -> bool:
    """ "Its core solver", "our search": a part named only by a possessive and common words, so
    it stands for the project the passage is about."""
    toks = sent.toks
    return (
        span[0] > 0
        and toks[span[0] - 1].low in ("its", "our", "my", "their")
        and not _strong(sent.span(*span))
    )


def _known_tech(words: list[str]) -> str | None:
    """A known language or framework before the kind noun, with the version written after it:
    "a Fortran 2008 module" gives "Fortran 2008"."""
    for n, word in enumerate(words[:-1]):
        if known_type(word) in ("library", "technology"):
            end = n + 1
            while end < len(words) - 1 and _VERSION_TOKEN.fullmatch(words[end]):
                end += 1
            return " ".join(words[n:end])
    return None


def _title_noun(name: str) -> bool:
    """One English noun written in Title Case ("Save", "Performance", "Finance"): outside any
    relation there is nothing to say it names a product rather than a UI label or a heading."""
    return " " not in name and name.istitle() and common_noun(name.lower())


def _replaceable(name: str) -> bool:
    """An end of a replacement: a name by its spelling (capitals, digits, dots, a known word)
    or one lower-case word that is no English noun. Not a description in common words ("our
    home-grown solver", "the bulk endpoint"), which would give the moderator no node to keep."""
    words = (clean(name) or "").split()
    if not words:
        return False
    if len(words) == 1:
        return _migratable(words[0])
    return any(
        any(c.isupper() or c.isdigit() for c in w) or known_lower(w) or re.search(r"[._]", w)
        for w in words
    )


def _migratable(name: str) -> bool:
    """An end of "from X to Y": a name by its spelling, or one lower-case word that is no English
    noun ("from dnsmasq to unbound" in a log written in lower case; not "from staging to prod")."""
    if _strong(name):
        return True
    word = clean(name)
    return word is not None and " " not in word and word.isalpha() and not common_noun(word)
