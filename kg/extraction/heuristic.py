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

from kg.extraction.lexicon import (
    HEAD_TYPES,
    NOT_NAMES,
    PERSON_OBJECT_RELATIONS,
    PERSON_SUBJECT_RELATIONS,
    PRONOUNS,
    VerbPattern,
)
from kg.extraction.phrases import (
    RELATIVE,
    Sentence,
    between_subject_and_verb,
    determiner,
    is_technical,
    name_word,
    pronoun_at,
    strip_sources,
    tokenize,
)
from kg.extraction.types import ExtractedEdge, ExtractedEntity, Extraction


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
        last_object: str | None = None
        for toks in tokenize(text):
            sent = Sentence(toks, text)
            last_object = self._relations(sent, seen, types, edges, last_object)
            # A phrase becomes an entity only when it completes a relation: "the plan" in
            # "Nothing is part of the plan" does not.
            for pair in edges:
                for key in pair:
                    names.setdefault(key, seen[key])
            self._standalone(sent, names, types)
        entities = [
            ExtractedEntity(name, types.get(key) or _type_of(name), self.entity_conf)
            for key, name in names.items()
        ][: self.max_entities]
        kept = {e.name.lower() for e in entities}
        edge_list = [
            ExtractedEdge(names[s], names[t], rel, self.edge_conf)
            for (s, t), rel in edges.items()
            if s in kept and t in kept
        ][: self.max_edges]
        return Extraction("heuristic", "heuristic-v2", entities, edge_list)

    def _relations(
        self,
        sent: Sentence,
        names: dict[str, str],
        types: dict[str, str],
        edges: dict[tuple[str, str], str],
        last_object: str | None,
    ) -> str | None:
        toks = sent.toks
        subjects: list[str] = []
        clause_start = 0  # where the last verb's objects ended: no subject reaches past it
        i = 0
        while i < len(toks):
            found = sent.verb_at(i)
            if found is None or not sent.verb_within(i):
                i += 1
                continue
            pattern, after, particle = found
            # "the export worker also depends on", "should use", "doesn't use": the subject
            # sits before a few adverbs and auxiliaries.
            k = i
            while k > 0 and i - k < 3 and between_subject_and_verb(toks[k - 1]):
                k -= 1
            negated = any(
                t.low in ("not", "never", "no") or t.low.endswith(("n't", "n’t"))  # noqa: RUF001
                for t in toks[max(0, k - 2) : i]
            )
            before = sent.phrase_before(k)
            if before is not None and before[0] >= clause_start:
                subjects = self._subjects(sent, before, clause_start, names)
            elif before is not None:
                subjects = [self._name(sent, before, names)]  # "A -> B -> C": B goes on
            elif (appositive := _appositive(sent, k)) is not None:
                subjects = [self._name(sent, appositive, names)]  # "The lead, Maria, manages"
            elif k > 0 and toks[k - 1].low in RELATIVE and last_object:
                subjects = [last_object]  # "the auth API, which depends on Redis"
            elif k > 0 and toks[k - 1].low in PRONOUNS:
                subjects = [last_object] if toks[k - 1].low == "it" and last_object else []
            start = particle + 1 if particle is not None else after
            objects, i = self._objects(sent, start, pattern, names, last_object)
            clause_start = i
            if negated or not objects:
                continue
            if pattern.two_objects:
                first, second = objects[0], objects[1] if len(objects) > 1 else None
                if second is not None:
                    self._edge(edges, first, second, pattern.relation)
                    last_object = second
                continue
            for subject in subjects:
                for obj in objects:
                    src, dst = (obj, subject) if pattern.reverse else (subject, obj)
                    self._edge(edges, src, dst, pattern.relation)
                    self._types(src, dst, pattern.relation, names, types)
            last_object = objects[-1]
        return last_object

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
            if (
                i < len(toks)
                and toks[i].text == ","
                and i + 1 < len(toks)
                and toks[i + 1].low == "and"
            ):
                i += 1
            if i < len(toks) and toks[i].low in ("and", "or", ","):
                nxt = i + 1
                if nxt < len(toks) and sent.verb_at(nxt) is not None:
                    return objects, nxt  # "uses A and reads from B": same subject
                i = nxt
                continue
            break
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
        for key in (src, dst):
            # A capitalised name used, called or read from by something is a technology.
            if names[key][:1].isupper() and names[key].lower().split()[-1] not in HEAD_TYPES:
                types.setdefault(key, "technology")

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
            technical = is_technical(tok.text)
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


def _appositive(sent: Sentence, k: int) -> tuple[int, int] | None:
    """A capitalised name between commas just before the verb: "The team lead, Maria, manages"."""
    toks = sent.toks
    if k < 3 or toks[k - 1].text != ",":
        return None
    span = sent.phrase_before(k - 1)
    if span is None or span[0] == 0 or toks[span[0] - 1].text != ",":
        return None
    return span if toks[span[0]].text[:1].isupper() else None


def _looks_like_person(name: str) -> bool:
    """ "Gabriel", "Noor", "Tomás", "Ana Lima": one or two plain capitalised words."""
    parts = name.split()
    return (
        1 <= len(parts) <= 2
        and all(p.isalpha() and p[:1].isupper() and p[1:].islower() for p in parts)
        and name.lower().split()[-1] not in HEAD_TYPES
    )


def _type_of(name: str) -> str:
    words = name.lower().split()
    head = words[-1] if words else ""
    if head in HEAD_TYPES:
        return HEAD_TYPES[head]
    if "_" in name:
        return "component"
    if re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)+", name):
        return "service"
    if is_technical(name):
        return "technology"
    return "concept"
