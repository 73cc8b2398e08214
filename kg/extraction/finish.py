"""The last pass: every raw phrase through ``names.clean``, refusals a moderator would make, an
owner's edge for a possessive, and the edges whose ends survived."""

from __future__ import annotations

import re

from kg.extraction.around import between, starts_ignoring_case
from kg.extraction.entity_types import looks_like_person as _looks_like_person
from kg.extraction.entity_types import person_cue
from kg.extraction.gazetteer import CAPITALISED_TYPES
from kg.extraction.judge import (
    bare,
    common_phrase,
    identifier,
    possessive,
    strong,
    title_noun,
)
from kg.extraction.names import KIND_NOUNS, clean, known_type
from kg.extraction.nouns import common_noun, marked_as_name, plain_word
from kg.extraction.phrases import sentence_spans
from kg.extraction.state import (
    DOMAIN,
    Cleaned,
)


def clean_name(
    done: Cleaned,
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
    owner, thing = possessive(surface)
    hosted = _HOSTED.fullmatch(thing)
    host = None
    if hosted and (hosted.group("tick") or not hosted.group("name")[:1].isupper()):
        host = hosted.group("host")
        host = host if host is not None and known_type(host) is not None else None
        if host is not None or hosted.group("tick"):
            thing = hosted.group("name")  # "the `ledger.settled` Kafka topic": Kafka's topic
    cleaned = _cleaned(key, surface, thing, relational, explicit, text)
    done.mapping[key] = cleaned.lower() if cleaned else None
    if cleaned is None:
        return
    done.final.setdefault(cleaned.lower(), cleaned)
    if key in types and cleaned.lower() == key:
        done.types.setdefault(cleaned.lower(), types[key])
    if owner and (owned := clean(owner)) is not None and not bare(owned):
        _owner_edge(done, key, owned, cleaned, evidence, text)
    if host is not None and host.lower() != cleaned.lower():
        done.final.setdefault(host.lower(), host)
        pair = (cleaned.lower(), host.lower())
        done.extra[pair] = "part_of"
        done.extra_evidence[pair] = _said(key, surface, evidence, text)


# "`ledger.settled` Kafka topic", "payouts Postgres table": a named topic, table or queue of a
# known broker or database, which the guidelines make a part of it.
_HOSTED = re.compile(
    r"(?P<name>[\w.\-/]+)(?P<tick>`)?\s+(?:(?P<host>[A-Z][\w.\-]*(?: [A-Z][\w.\-]*)?)\s+)?"
    r"(?:topics?|tables?|queues?|buckets?|partitions?|schemas?|streams?|indexes|index"
    r"|(?<=` )(?:metrics|logs|traces|events))"
)


def _cleaned(
    key: str, surface: str, thing: str, relational: set[str], explicit: set[str], text: str
) -> str | None:
    """The clean name of a phrase, or ``None`` when it is refused: a fragment, a name outside
    any relation that does not look like one, or an identifier from code."""
    cleaned = clean(thing)
    if cleaned is None and key in explicit and len(surface) > 1:
        cleaned = surface  # "web -> api -> db": the writer drew these as nodes
    if cleaned is not None and key not in relational and not strong(cleaned):
        cleaned = None
    if cleaned is not None and key not in relational and title_noun(cleaned):
        cleaned = None  # "click Save", "Improved Performance": English words in Title Case
    if (
        cleaned is not None
        and key not in explicit
        and identifier(cleaned, text)
        and not _titled(cleaned, text)
    ):
        cleaned = None  # "sync_tasks", "max_connections", "$EDITOR": code, not a thing
    if (
        cleaned is not None
        and key not in explicit
        and common_noun(cleaned)
        and not marked_as_name(cleaned, text)
    ):
        cleaned = None  # "retries", "payments": a moderator would reject an English noun alone
    if cleaned is not None and key not in explicit and _plain(cleaned, text):
        cleaned = None  # "needed almost no changes", "the dashboard": no name at all
    if cleaned is not None and key not in explicit and _described(cleaned, surface, text):
        cleaned = None  # "long-term storage", "the private subnets": a description, no part
    if cleaned is not None and key not in explicit and only_in_commands(cleaned, text):
        cleaned = None  # "`dbt run`", "`--json`", "`public/`": a command line or a path
    if cleaned is not None and DOMAIN.fullmatch(cleaned) and known_type(cleaned) is None:
        cleaned = None  # "example.com", "status.acme.org": an address, not a thing
    if cleaned is not None and ("](" + cleaned in text or "://" + cleaned in text):
        cleaned = None  # a link's target: "[badge](https://img.shields.io/...)"
    return cleaned


def _said(key: str, surface: str, evidence: dict[tuple[str, str], str], text: str) -> str:
    """The sentence an edge a phrase adds by itself comes from: that of any edge of the phrase,
    else the first sentence of the passage that writes it."""
    found = next((v for (a, b), v in evidence.items() if key in (a, b)), "")
    if found:
        return found
    low = surface.lower()
    return next((text[a:b] for a, b in sentence_spans(text) if low in text[a:b].lower()), "")


def _titled(name: str, text: str) -> bool:
    """ "# rover_nav": a snake_case word that is the passage's heading names its project."""
    return re.search(rf"^#[ \t]+{re.escape(name)}[ \t]*$", text, re.M | re.I) is not None


def _owner_edge(
    done: Cleaned,
    key: str,
    owned: str,
    cleaned: str,
    evidence: dict[tuple[str, str], str],
    text: str,
) -> None:
    """ "Quillstack's search service": the owner is a name too; a person owns the thing, anything
    else has it as a part. The edge's evidence is the sentence of any edge of the phrase."""
    done.final.setdefault(owned.lower(), owned)
    person = _looks_like_person(owned) and person_cue(owned, text)
    rel = "owns" if person else "part_of"
    pair = (owned.lower(), cleaned.lower()) if rel == "owns" else (cleaned.lower(), owned.lower())
    if pair[0] != pair[1]:
        done.extra[pair] = rel
        done.extra_evidence[pair] = _said(key, cleaned, evidence, text)


def kept_edges(
    done: Cleaned,
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


def _plain(name: str, text: str) -> bool:
    """A lone lower-case word that names nothing: an English word that is no noun ("almost",
    "fine") or a bare kind noun ("dashboard", "jobs"), unless the writer marked it as a name or
    it is a product's name written in a lower-case log ("unbound"). Doer nouns ("indexer",
    "exporter") are left to the rules of the project's parts."""
    if " " in name or not name.islower() or known_type(name) is not None:
        return False
    if name in CAPITALISED_TYPES:
        return False  # "from dnsmasq to unbound": a product written in a lower-case log
    kind = name in KIND_NOUNS and not name.endswith(("er", "or"))
    return (plain_word(name) or kind) and not marked_as_name(name, text)


def _described(name: str, surface: str, text: str) -> bool:
    """Several English words with no head that names a part, never written as a definite thing
    ("the data catalog" is one): "garbage masks", "ferry crossings", "Spell checking" (a capital
    only from the sentence's start)."""
    if " " not in name or not name[1:].islower() or marked_as_name(name, text):
        return False
    return common_phrase(name) and not between(name, text, _DEFINITE_BEFORE, _BOUNDARY)


# "the data catalog", "Quillstack's data catalog": a definite thing.
_DEFINITE_BEFORE = re.compile(r"(?:\b(?i:the|our|its|my|their|his|her|this)|['\u2019]s)\s+\Z")
_BOUNDARY = re.compile(r"\b")


_BACKTICKED = re.compile(r"`([^`\n]+)`")


def only_in_commands(name: str, text: str) -> bool:
    """Every mention of ``name`` is inside backticks that hold more than the name: a command line
    ("`dbt run`"), a flag ("`--json`") or a path ("`public/`"), which the guidelines exclude."""
    if "`" not in text:
        return False
    spans = [(m.start(1), m.end(1)) for m in _BACKTICKED.finditer(text)]
    found = _mentions(name, text)
    if not found or not spans:
        return False
    for start, end in found:
        inside = next((s for s in spans if s[0] <= start and end <= s[1]), None)
        if inside is None or text[inside[0] : inside[1]].strip().lower() == name.lower():
            return False
    return True


_NOT_AFTER_WORD = re.compile(r"(?<![\w.-])")
_NOT_BEFORE_WORD = re.compile(r"(?![\w])")


def _mentions(name: str, text: str) -> list[tuple[int, int]]:
    r"""(start, end) of each mention of ``name`` in any case as a word of its own, left to right
    and not overlapping: what ``finditer`` of ``(?<![\w.-])NAME(?![\w])`` (ignoring case)
    gives, found without compiling a pattern per name."""
    out: list[tuple[int, int]] = []
    resume = 0
    for at in starts_ignoring_case(name, text):
        end = at + len(name)
        if (
            at >= resume
            and _NOT_AFTER_WORD.match(text, at) is not None
            and _NOT_BEFORE_WORD.match(text, end) is not None
        ):
            out.append((at, end))
            resume = end
    return out
