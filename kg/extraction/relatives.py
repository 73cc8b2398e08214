"""Relative clauses whose object is the phrase before them: "the raw schema, which Fivetran
loads every hour", "the `sessions` table that dbt builds", "WordPress, which Next.js reads
through WPGraphQL". The relative clause's subject is the source and the phrase before "which"
or "that" the target; the verb says the relation. Only verbs whose object is plainly a store or
a stream are read, and the clause must leave the verb without an object of its own."""

from __future__ import annotations

import re

from kg.extraction.entity_types import software_type
from kg.extraction.judge import strong
from kg.extraction.lexicon import DETERMINERS
from kg.extraction.names import clean, known_type
from kg.extraction.phrases import ADVERBS_AUX, Sentence
from kg.extraction.state import ExtractorBase, State

# Verb (any of its forms) -> the relation from the relative clause's subject to the phrase.
_VERBS: dict[str, str] = {}
for _forms, _rel in (
    ("consume consumes consumed", "consumes_from"),
    ("read reads", "reads_from"),
    ("poll polls polled", "reads_from"),
    ("query queries queried", "reads_from"),
    ("open opens", "reads_from"),
    ("scrape scrapes scraped", "reads_from"),
    ("load loads loaded", "writes_to"),
    ("build builds", "writes_to"),
    ("populate populates populated", "writes_to"),
    ("fill fills filled", "writes_to"),
    ("feed feeds fed", "writes_to"),
    ("write writes wrote", "writes_to"),
    ("refresh refreshes refreshed", "writes_to"),
    ("produce produces produced", "writes_to"),
    ("use uses used", "uses"),
    ("call calls called", "calls"),
    ("monitor monitors monitored", "monitors"),
    ("watch watches watched", "monitors"),
    ("own owns owned", "owns"),
    ("maintain maintains maintained", "maintains"),
):
    for _form in _forms.split():
        _VERBS[_form] = _rel
# Words that may follow the verb when the relative's object is the phrase before it.
_AFTER_GAP = {
    "every", "each", "nightly", "daily", "hourly", "weekly", "through", "via", "with", "on",
    "for", "at", "in", "from", "lazily", "directly", "automatically", "once", "twice", "and",
    "but", "then", "now", "too", "as", "before", "after",
}  # fmt: skip


class RelativeRules(ExtractorBase):
    def _object_relatives(
        self,
        sent: Sentence,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
    ) -> None:
        toks = sent.toks
        for r in range(1, len(toks) - 2):
            if toks[r].low not in ("which", "that"):
                continue
            j = r - 1 if toks[r - 1].text == "," else r
            if toks[r].low == "which" and j == r:
                continue  # "which" without a comma asks a question or picks one out
            target = sent.phrase_before(j)
            subject = sent.phrase_after(r + 1)
            if target is None or subject is None or target[1] != j:
                continue
            # "which Fivetran loads every hour": the phrase scan reads on through the verb.
            cut = next(
                (x for x in range(subject[0] + 1, subject[1]) if toks[x].low in _VERBS), None
            )
            subject = (subject[0], cut) if cut is not None else subject
            if any(toks[x].low not in DETERMINERS for x in range(r + 1, subject[0])):
                continue
            v = subject[1]
            while v < len(toks) and (toks[v].low in ADVERBS_AUX or toks[v].low == "can"):
                v += 1
            if v >= len(toks) or toks[v].low not in _VERBS:
                continue
            if v + 1 < len(toks) and toks[v + 1].low not in _AFTER_GAP:
                continue  # "which Fivetran loads into Snowflake" reads on with its own object
            self._relative_edge(sent, subject, target, _VERBS[toks[v].low], names, edges, state)

    def _relative_edge(
        self,
        sent: Sentence,
        subject: tuple[int, int],
        target: tuple[int, int],
        rel: str,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
    ) -> None:
        said = clean(sent.span(*subject))
        what = clean(sent.span(*target))
        if said is None or what is None:
            return
        definite = subject[0] > 0 and sent.toks[subject[0] - 1].low == "the"
        if not (strong(said) or definite):
            return  # "which we download": no name for the doer
        src = self._name(sent, subject, names)
        dst = self._name(sent, target, names)
        self._connect(edges, state, src, dst, rel)


_VERSIONED_GLOSS = re.compile(
    r"[ \t]*\((?P<tech>[A-Z][\w.+#-]*(?: [A-Z][\w.+#-]*)? v?\d+(?:\.\d+)*)\)"
)
# A host-like head after "on": "PHD2 on the ASIAIR", "nginx on the raspberry pi".
_PART_HEADS = {
    "dashboard", "queue", "topic", "table", "handler", "job", "index", "bucket", "schema",
    "collection", "plugin", "widget", "panel", "view", "workflow", "pipeline",
}  # fmt: skip
_HOST_HEADS = {"host", "node", "box", "server", "pi", "cluster", "vm", "machine", "instance"}
_HOSTED_ON_BEFORE = {"and", ",", "with", "of", "for", "is", "are", "was", "were"}


class PlacedRules(ExtractorBase):
    def _placed_on(
        self,
        sent: Sentence,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
    ) -> None:
        """ "Guiding is PHD2 on the ASIAIR", "nginx on the raspberry pi kept failing": a piece
        of software named right before "on" and a named machine or platform after it, with no
        verb between them, is software that runs on that machine."""
        toks = sent.toks
        for i in range(1, len(toks) - 1):
            if toks[i].low not in ("on", "behind", "in"):
                continue
            left = sent.phrase_before(i)
            right = sent.phrase_after(i + 1)
            if left is None or right is None or left[1] != i:
                continue
            if toks[i].low == "behind":
                self._behind(sent, left, right, names, edges, state)
                continue
            if toks[i].low == "in":
                self._part_in(sent, left, right, names, edges, state)
                continue
            if left[0] > 0 and sent.verb_at(left[0] - 1) is not None:
                continue  # "runs X on Y" is the verb scan's
            if left[0] > 0 and toks[left[0] - 1].low not in _HOSTED_ON_BEFORE | DETERMINERS:
                continue  # "the Steam version on Linux" after "running": a clause, not a name
            software = clean(sent.span(*left))
            place = clean(sent.span(*right))
            if software is None or place is None:
                continue
            if software_type(software) not in ("technology", "library", "tool"):
                continue
            if known_type(place) == "library" or not (
                strong(place) or place.split()[-1].lower() in _HOST_HEADS
            ):
                continue  # "Kotlin on Ktor", "on the frontend": no machine or platform
            src, dst = self._name(sent, left, names), self._name(sent, right, names)
            self._connect(edges, state, src, dst, "runs_on")

    def _part_in(
        self,
        sent: Sentence,
        left: tuple[int, int],
        right: tuple[int, int],
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
    ) -> None:
        """ "the revenue dashboard in Metabase", "the `renders` queue in RabbitMQ": a definite part
        (a dashboard, queue, table, handler ...) named in a product is part of it."""
        toks = sent.toks
        if left[0] == 0 or toks[left[0] - 1].low != "the":
            return
        if left[0] > 1 and sent.verb_at(left[0] - 2) is not None:
            return  # "stores the sessions table in Postgres": the verb's own place
        words = sent.span(*left).replace("`", "").split()
        if len(words) < 2 or words[-1].lower() not in _PART_HEADS:
            return
        part, whole = clean(sent.span(*left)), clean(sent.span(*right))
        if part is None or whole is None or known_type(whole) is None:
            return
        src, dst = self._name(sent, left, names), self._name(sent, right, names)
        self._connect(edges, state, src, dst, "part_of")

    def _behind(
        self,
        sent: Sentence,
        left: tuple[int, int],
        right: tuple[int, int],
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
    ) -> None:
        """ "We run inventory-api behind Envoy": the writer's own service (a name the gazetteer does
        not know) behind a known proxy needs it."""
        service = clean(sent.span(*left))
        proxy = clean(sent.span(*right))
        if service is None or proxy is None or not strong(service):
            return
        if known_type(service) is not None:
            return  # "Backblaze B2 behind Bunny CDN": a product behind a CDN is routed to
        if software_type(proxy) not in ("technology", "tool", "service"):
            return
        src, dst = self._name(sent, left, names), self._name(sent, right, names)
        self._connect(edges, state, src, dst, "depends_on")

    def _glossed_runtime(
        self,
        sent: Sentence,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
    ) -> None:
        """ "We run inventory-api (Go 1.23) behind Envoy": a language or runtime with its version
        in parentheses right after a name is what the name is built with."""
        toks = sent.toks
        for j in range(len(toks)):
            found = _VERSIONED_GLOSS.match(sent.text, toks[j].end)
            if found is None:
                continue
            tech = found.group("tech")
            if software_type(tech.rsplit(" ", 1)[0]) not in ("technology", "library"):
                continue
            named = sent.phrase_before(j + 1)
            said = clean(sent.span(*named)) if named is not None else None
            if named is None or said is None or not strong(said) or known_type(said) is not None:
                continue
            self._built_with(sent, named, tech, names, edges, state)
