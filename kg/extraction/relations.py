"""A verb's subjects and objects and the edges between them: coordination ("A, B and C"), the
implied subject (the passage's project), and the types a relation hints for its ends."""

from __future__ import annotations

import re

from kg.extraction.entity_types import looks_like_person as _looks_like_person
from kg.extraction.judge import (
    bare,
    common_phrase,
    replaceable,
    strong,
)
from kg.extraction.lexicon import (
    HEAD_TYPES,
    PERSON_OBJECT_RELATIONS,
    PERSON_SUBJECT_RELATIONS,
    VerbPattern,
    canonical,
)
from kg.extraction.names import clean
from kg.extraction.phrases import (
    Sentence,
    determiner,
    pronoun_at,
)
from kg.extraction.spans import (
    next_conjunct,
)
from kg.extraction.state import (
    ExtractorBase,
    Scan,
    State,
)

_PARENTHESISED = re.compile(r"[ \t]*\(([^()\n]{1,160})\)")
_LIST_SPLIT = re.compile(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+")


class RelationRules(ExtractorBase):
    def _link(
        self,
        pattern: VerbPattern,
        objects: list[str],
        scan: Scan,
        names: dict[str, str],
        types: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
    ) -> None:
        """The edges of one relation: "replaced X with Y" links its two objects, any other
        verb each subject to each object. The last object is what "which" refers to next."""
        if pattern.two_objects:
            if len(objects) > 1:
                first, second = objects[0], objects[1]
                scan.last_object = state.last_object = second
                if pattern.relation == "replaced_by" and not (
                    replaceable(names[first]) and replaceable(names[second])
                ):
                    return  # "replaced the hand-rolled http code with Retrofit": no named old end
                self._connect(edges, state, first, second, pattern.relation)
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
                self._connect(edges, state, src, dst, rel)
        scan.last_object = state.last_object = objects[-1]

    @staticmethod
    def _implied(
        subjects: list[str], names: dict[str, str], state: State, pattern: VerbPattern
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
                (bare(names.get(k, k)) or common_phrase(names.get(k, k)) or k in state.owned)
                and k not in state.explicit
                for k in kept
            )
        ):
            kept = []  # "The frontend is served by Caddy": the README's project is
        if kept:
            if state.topic is None and len(kept) == 1 and strong(names.get(kept[0], "")):
                state.topic = kept[0]
            return kept
        if pattern.reverse or pattern.two_objects or state.topic is None:
            return []
        return [state.topic]

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
                listed = self._listed(sent, span, names)
                if not listed or strong(names.get(sent.span(*span).lower(), "")):
                    objects.append(self._name(sent, span, names))
                objects += listed  # "runs eval suites (GSM8K, HumanEval)": each suite
                i = span[1]
            if pattern.two_objects and len(objects) == 1:
                if i < len(toks) and toks[i].low == pattern.two_objects:
                    i += 1
                    continue
                break
            if pattern.two_objects:
                break
            nxt = next_conjunct(sent, i, pattern.particle)
            if nxt is None:
                break
            if nxt < len(toks) and sent.verb_at(nxt) is not None:
                return objects, nxt  # "uses A and reads from B": same subject
            i = nxt
        return objects, max(i, start + 1)

    def _listed(self, sent: Sentence, span: tuple[int, int], names: dict[str, str]) -> list[str]:
        """The names listed in parentheses right after an object: "evaluation suites (GSM8K,
        HumanEval, TruthfulQA)" names three suites. A single name there is a gloss, not a list."""
        found = next(
            (
                hit
                for j in range(span[0], span[1])
                if (hit := _PARENTHESISED.match(sent.text, sent.toks[j].end)) is not None
            ),
            None,
        )  # "suites (A, B) nightly": the phrase scan reads on past the parenthesis
        if found is None:
            return []
        items = [w.strip() for w in _LIST_SPLIT.split(found.group(1)) if w.strip()]
        if len(items) < 2 or not all(clean(w) is not None and strong(w) for w in items):
            return []
        keys = []
        for item in items:
            name = clean(item) or item
            names.setdefault(name.lower(), name)
            keys.append(name.lower())
        return keys

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
