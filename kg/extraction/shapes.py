"""Relation shapes beside the verb scan: "X is a Rails app", a name apposed to a kind noun,
"called X", a requirements list, "the minimum is now X", and a protocol "over" which a relation
runs. Migrations and "instead of X" are in migrations.py."""

from __future__ import annotations

import re

from kg.extraction.clauses import (
    minimum_requirement,
)
from kg.extraction.entity_types import given_name, software_type
from kg.extraction.entity_types import looks_like_person as _looks_like_person
from kg.extraction.entity_types import resolve_type as _type
from kg.extraction.judge import (
    apposed_name,
    bare,
    common_phrase,
    known_tech,
    owned_part,
    strong,
)
from kg.extraction.lexicon import (
    HEAD_TYPES,
)
from kg.extraction.names import KIND_NOUNS, clean, known_type
from kg.extraction.nouns import common_noun
from kg.extraction.phrases import (
    ADVERBS_AUX,
    AUX_WORDS,
    Sentence,
)
from kg.extraction.state import (
    VERSION_TOKEN,
    ExtractorBase,
    Scan,
    State,
)


class ShapeRules(ExtractorBase):
    def _carrier(
        self,
        sent: Sentence,
        i: int,
        scan: Scan,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
    ) -> None:
        """ "posts readings to Home Assistant over MQTT", "calls it over gRPC": the protocol
        or format named after "over" is one the relation's subject uses."""
        toks = sent.toks
        if i + 1 >= len(toks) or toks[i].low != "over":
            return
        span = sent.phrase_after(i + 1)
        found = clean(sent.span(*span)) if span is not None else None
        if span is None or found is None or software_type(found) != "technology":
            return
        key = self._name(sent, span, names)
        for subject in scan.subjects:
            if subject:
                self._connect(edges, state, subject, key, "uses")

    def _copula(
        self,
        sent: Sentence,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
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
            j = k - 1 if k > 1 and toks[k - 1].low in ("itself", "themselves") else k
            before = sent.phrase_before(j) if j else None
            if toks[k].low == "it's" and (state.last_subject or state.topic):
                subject = state.last_subject or state.topic or ""  # "It's a Laravel app"
            elif before is not None and before[1] == j:
                subject = self._name(sent, before, names)
                if owned_part(sent, before):
                    state.owned.add(subject)
                if clean(names[subject]) is None:
                    return
            elif (
                k > 0 and toks[k - 1].low in ("it", "it's") and (state.last_subject or state.topic)
            ):
                subject = state.last_subject or state.topic or ""
            else:
                return
            if state.topic is None and strong(names.get(subject, "")):
                state.topic = subject
            if state.topic and (bare(names.get(subject, subject)) or subject in state.owned):
                subject = state.topic  # "The frontend is a small Svelte app": the project's
            state.last_object = subject
            span = sent.phrase_after(k + 2)
            if span is None:
                return
            words = sent.span(*span).split()
            head_kind = words[-1].lower() in KIND_NOUNS or words[-1].lower() in HEAD_TYPES
            tech = known_tech(words)
            if head_kind and tech is not None:
                key = tech.lower()
                names.setdefault(key, tech)
                self._connect(edges, state, subject, key, "built_with")
            return

    def _apposed(
        self,
        sent: Sentence,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
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
            tech = known_tech(words)
            head = words[-1].lower()
            surface = sent.span(*named)
            if tech is None or not (head in KIND_NOUNS or head in HEAD_TYPES):
                continue
            if not apposed_name(surface) or clean(surface) is None:
                continue
            self._built_with(sent, named, tech, names, edges, state)

    def _apposed_after(
        self,
        sent: Sentence,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
    ) -> None:
        """ "soilsink, a tiny Go service that ...", "TinyUSB, a C library linked in": a name
        glossed by an indefinite kind noun after a known language or framework is built with it."""
        toks = sent.toks
        for c in range(1, len(toks) - 2):
            if toks[c].text != "," or toks[c + 1].low not in ("a", "an"):
                continue
            named = sent.phrase_before(c)
            kind = sent.phrase_after(c + 1)
            if named is None or kind is None or named[1] != c:
                continue
            end = kind[1]
            if end + 1 < len(toks) and toks[end].text == "," and toks[end + 1].low in ("or", "and"):
                continue  # "to stdout, a local DuckDB database, or an S3 prefix": a list
            surface = sent.span(*named)
            if not apposed_name(surface) or clean(surface) is None:
                continue
            words = sent.span(*kind).split()
            tech = known_tech(words)
            head = words[-1].lower()
            if tech is None or not (head in KIND_NOUNS or head in HEAD_TYPES):
                continue
            self._built_with(sent, named, tech, names, edges, state)

    def _used_for(
        self,
        sent: Sentence,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
    ) -> None:
        """ "Prometheus, Loki and Grafana are used for monitoring": each named subject of "is
        used for" (or "to", "as") is what the passage's project uses."""
        toks = sent.toks
        if state.topic is None:
            return
        for k in range(1, len(toks) - 2):
            if toks[k].low not in ("is", "are"):
                continue
            v = k + 1
            while v < len(toks) - 1 and toks[v].low in ADVERBS_AUX:
                v += 1
            if toks[v].low != "used" or toks[v + 1].low not in ("for", "to", "as"):
                continue
            end = k
            while (before := sent.phrase_before(end)) is not None and before[1] == end:
                key = self._name(sent, before, names)
                said = clean(names[key])
                if said is not None and strong(said) and key != state.topic:
                    self._connect(edges, state, state.topic, key, "uses")
                end = before[0]  # "Prometheus, Loki and Grafana": each joined subject
                while end > 0 and toks[end - 1].low in (",", "and"):
                    end -= 1
                if end == before[0]:
                    break
            return

    def _made_of(
        self,
        sent: Sentence,
        k: int,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
    ) -> None:
        """ "The engine is Unity 2022 LTS", "everything else is NumPy and SciPy": a part of the
        passage's project that *is* a known language, framework or engine means the project is
        built with it. Only with a topic, and only when the subject is not itself a name."""
        if state.topic is None:
            return
        toks = sent.toks
        before = sent.phrase_before(k)
        said = clean(sent.span(*before)) if before is not None else None
        if said is not None and strong(said):
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
            self._connect(edges, state, state.topic, key, "built_with")

    def _naming(
        self,
        sent: Sentence,
        i: int,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
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
            tech = next(
                (w for w in words[:-1] if software_type(w) in ("library", "technology")), None
            )
            if tech is not None and words[-1].lower() in KIND_NOUNS | set(HEAD_TYPES):
                key = tech.lower()
                names.setdefault(key, tech)
                self._connect(edges, state, named, key, "built_with")
        return max(span[1], i + 1)

    def _required(
        self,
        sent: Sentence,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
        rel: str = "depends_on",
    ) -> None:
        """ "## Requirements" then "- Python 3.11 or newer": the item's leading name is what the
        README's project depends on (``rel``; under "## Stack" it is what the project uses)."""
        if state.topic is None:
            return
        toks = sent.toks
        span = sent.phrase_after(0)
        if (span is None or span[0] != 0) and known_type(toks[0].text) is not None:
            # "- Go 1.22": a known name that reads as a verb at a sentence's start, and its version
            end = 1
            while end < len(toks) and VERSION_TOKEN.fullmatch(toks[end].text):
                end += 1
            span = (0, end)
        if span is None or span[0] != 0:
            return
        while span is not None:
            key = self._name(sent, span, names)
            # Under that heading a bare lower-case word is a package ("libvips"), if no generic
            # noun.
            if clean(names[key]) is not None:
                self._connect(edges, state, state.topic, key, rel)
            # "- PostgreSQL 15 with PostGIS 3.4", "- libpq and libxml2": each is required.
            nxt = span[1]
            if nxt >= len(toks) or toks[nxt].low not in ("with", "and", "+", ","):
                return
            span = sent.phrase_after(nxt + 1)
            span = span if span is not None and span[0] == nxt + 1 else None

    def _minimum(
        self,
        sent: Sentence,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
    ) -> None:
        """ "The minimum is now Django 4.2": the passage's project depends on that version."""
        found = minimum_requirement(sent.span(0, len(sent.toks)))
        if state.topic is None or found is None or clean(found) is None:
            return
        key = found.lower()
        names.setdefault(key, found)
        self._connect(edges, state, state.topic, key, "depends_on")

    def _passive_tool(
        self,
        sent: Sentence,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
    ) -> None:
        """ "Thumbnails are generated by Imagick", "reads are aligned with BWA", "fonts are parsed
        with ttf-parser": a passive of a verb no pattern knows, whose subject is common words,
        says which named tool the passage's project uses for that work."""
        toks = sent.toks
        if state.topic is None:
            return
        for a in range(1, len(toks) - 3):
            if toks[a].low not in AUX_WORDS or sent.verb_at(a) is not None:
                continue
            v = a + 1
            while v < len(toks) - 2 and toks[v].low in ADVERBS_AUX:
                v += 1  # "are now served by", "is also handled by"
            verb, prep = toks[v], toks[v + 1]
            if (
                not re.fullmatch(r"[a-z]+(?:ed|en)|built|made|done|run|kept|sent", verb.text)
                or prep.low not in ("by", "with", "using", "via", "through")
                or (sent.verb_at(v) is not None and sent.verb_within(v))
                or (v > a + 1 and sent.verb_at(v) is not None)
            ):
                continue
            subject = sent.phrase_before(a)
            said = sent.span(*subject) if subject is not None else ""
            if subject is None or not (
                common_phrase(said) or (bare(said) and common_noun(said)) or _plain_work(said)
            ):
                continue
            span = sent.phrase_after(v + 2)
            while span is not None:
                found = clean(sent.span(*span))
                if found is None or not strong(found) or _person(found):
                    break  # "shared by Ayla Brandt": a person's work, not a tool's
                if found.split()[-1].lower() in HEAD_TYPES:
                    break  # "driven by the catalog-sync job": a part with relations of its own
                key = self._name(sent, span, names)
                self._connect(edges, state, state.topic, key, "uses")
                # "handled by Meilisearch and Typesense": each named tool does that work.
                nxt = span[1]
                if nxt >= len(toks) or toks[nxt].low not in ("and", "or"):
                    break
                span = sent.phrase_after(nxt + 1)


def _person(name: str) -> bool:
    """A given name, or two plain capitalised words ("Ayla Brandt") the gazetteer does not know."""
    return given_name(name) or (
        len(name.split()) == 2 and _looks_like_person(name) and known_type(name) is None
    )


def _plain_work(surface: str) -> bool:
    """ "the FFT work", "Card tokenisation": work named by a lower-case English noun, perhaps
    after an acronym or a name that says what it is about, which is no product of its own."""
    words = surface.split()
    head = words[-1]
    return (
        1 < len(words) <= 3
        and head.islower()
        and head.isalpha()
        and head not in HEAD_TYPES
        and head not in KIND_NOUNS
        and not head.endswith(("er", "or"))
        and known_type(head) is None
        and (common_noun(head.removesuffix("s")) or (head.endswith("ing") and len(head) > 5))
    )
