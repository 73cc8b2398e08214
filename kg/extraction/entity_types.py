"""Entity types for the offline extractor: the gazetteer first, then what the relations hinted
(person, team), a file's spelling, the noun written next to a name ("the `renders` queue", "host
mon-2"), the head noun, and the context a person's name stands in."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from kg.extraction.around import between
from kg.extraction.lexicon import HEAD_TYPES
from kg.extraction.names import FILE_NAME as _FILE_NAME
from kg.extraction.names import GENERIC_ACRONYMS, KIND_NOUNS, known_type
from kg.extraction.nouns import english_word
from kg.extraction.nouns import plain_word as _plain_word
from kg.extraction.phrases import is_technical


def looks_like_person(name: str) -> bool:
    """ "Gabriel", "Noor", "Tomás", "Ana Lima", "Jae-won": one or two plain capitalised words."""
    parts = name.split()
    return (
        1 <= len(parts) <= 2
        and all(_plain_capitalised(p) for p in parts)
        and name.lower().split()[-1] not in HEAD_TYPES
    )


def _plain_capitalised(word: str) -> bool:
    head, _, tail = word.partition("-")
    return (
        head.isalpha()
        and head[:1].isupper()
        and head[1:].islower()
        and (not tail or (tail.isalpha() and tail.islower()))
    )


_GIVEN_NAMES = Path(__file__).resolve().parent / "data" / "given_names.txt"


@lru_cache(maxsize=1)
def _given_names() -> frozenset[str]:
    lines = _GIVEN_NAMES.read_text(encoding="utf-8").splitlines()
    return frozenset(
        name.strip() for line in lines if not line.startswith("#") for name in line.split(",")
    ) - {""}


def given_name(name: str) -> bool:
    """ "Renata", "Hanne Lindqvist": a person's name by its first word, from a list of given names
    (``data/given_names.txt``), when the gazetteer does not know the name as a product."""
    return (
        looks_like_person(name)
        and name.split()[0].lower() in _given_names()
        and known_type(name) is None
    )


# "the search team at Cobblestone", "Leaving Brightwave after six years": a company.
_ORG_BEFORE = re.compile(r"\b(?:[Aa]t|[Jj]oined|[Ll]eaving|[Ll]eft|[Ww]orked for)\s+\Z")
_ORG_AFTER = re.compile(r"\b(?!['\u2019]s)")
_BOUNDARY = re.compile(r"\b")

# "thanks to Ana", "Ana reviewed it", "Ana, who": the name is a person's.
_PERSON_BEFORE = re.compile(
    r"\b(?i:by|thanks(?: to)?|thanked|asked|ask|told|pinged|cc|merged|walked|paired with"
    r"|handed (?:it )?to|escalations go to|owner is|maintainer is)\s+\Z"
)
_PERSON_AFTER = re.compile(
    r"(?:'s|\u2019s)?\s+(?:did|does|said|says|asked|wrote|reviewed|merged|fixed|owns"
    r"|manages|leads|maintains|joined|left|suggested|pointed|paired|took|handles|added|noticed"
    r"|found|spotted|reported|helped|approved|shipped|rewrote|thinks|wants|will|has|had"
    r"|change|patch|review|PR|team)\b"
    r"|\s*(?:,\s*who\b|\(@)"
)


def person_cue(name: str, text: str) -> bool:
    """``name`` stands where a person's name does: after "by", "thanks to", "cc"..., or before
    "said", "reviewed", "'s patch", ", who"."""
    return between(name, text, _PERSON_BEFORE, _BOUNDARY) or between(
        name, text, None, _PERSON_AFTER, edge_before=True
    )


_ORG_HEADS = {
    "collective", "labs", "lab", "inc", "ltd", "gmbh", "corp", "foundation", "institute",
    "university", "cloud", "software", "systems", "technologies", "studios", "studio",
}  # fmt: skip
_TEAM_HEADS = {"guild", "eng", "team", "squad", "crew", "chapter", "guild's", "ops", "devrel"}


_LISTED_KINDS = (
    ("services|microservices", "service"),
    ("workers|jobs|daemons|components", "component"),
    ("queues|topics|tables|buckets", "dataset"),
)
_DATASET_NOUNS = r"topics?|tables?|queues?|buckets?|streams?|datasets?|corpus|index|views?"
_HOST_NOUNS = (
    r"hosts?|clusters?|nodes?|boxe?s?|servers?|instances?|vms?|machines?|racks?|partitions?"
)
# A name written in quotes or backticks stands in the same place: "the `renders` queue".
_QUOTE = r"[`'\"]?"
_LISTED_BEFORE = tuple(
    (re.compile(rf"(?i:\b(?:{kinds})):[^.:\n]*?{_QUOTE}\Z"), kind) for kinds, kind in _LISTED_KINDS
)
# "a MinIO bucket, `tiles-cache`", "the `ledger.settled` Kafka topic": the kind noun beside
# the name, perhaps after a comma or with the broker's name between.
_DATASET_BEFORE = re.compile(rf"(?i:\b(?:{_DATASET_NOUNS}))\s*,?\s+{_QUOTE}\Z")
_DATASET_AFTER = re.compile(rf"{_QUOTE}\s+(?:[A-Z][\w.-]*\s+){{0,2}}(?i:(?:{_DATASET_NOUNS})\b)")
_HOST_BEFORE = re.compile(rf"(?i:\b(?:{_HOST_NOUNS}))\s+{_QUOTE}\Z")
_HOST_AFTER = re.compile(rf"{_QUOTE}\s+(?i:(?:{_HOST_NOUNS})\b)")
_DATASET_SUFFIX = re.compile(r"[a-z]+(?:[._-][a-z]+)*\.(?:raw|clean|v\d)")
_SERVICE_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")
_TABLE_PREFIX = re.compile(r"(?:fct|dim|stg|raw|int|agg|tbl)_\w+|\w+_(?:events|logs|raw|daily)")
_HOSTNAME = re.compile(r"[a-z]+(?:-[a-z0-9]+)*-\d+[a-z]?")


def context_type(name: str, text: str) -> str | None:
    """Hosts and clusters are components, tables, topics, queues and buckets are datasets,
    by the noun written next to the name or by its spelling ("prod-eu-1", "fct_orders")."""
    for before, kind in _LISTED_BEFORE:
        if between(name, text, before, None):
            return kind  # "three internal services: pricing, inventory": each is a service
    if between(name, text, _DATASET_BEFORE, None) or between(name, text, None, _DATASET_AFTER):
        return "dataset"
    if between(name, text, _HOST_BEFORE, None) or between(name, text, None, _HOST_AFTER):
        return "component" if not known_type(name) else None
    if _TABLE_PREFIX.fullmatch(name) or _DATASET_SUFFIX.fullmatch(name):
        return "dataset"
    if _HOSTNAME.fullmatch(name):
        return "component"
    return None


def _versioned(name: str) -> str | None:
    """ "PostgreSQL 16", "Unity 2022 LTS", "Kafka Streams": the type of a known name before a
    version or a capitalised word; not before a lower-case noun, which names a part of it
    ("Airflow scheduler", "Loki compactor")."""
    words = name.split()
    if len(words) < 2:
        return None
    tail = words[-1]
    if tail.islower() and tail.isalpha():
        return None
    return known_type(" ".join(words[:-1]))


_KIND_WORDS = {
    "library": "library", "package": "library", "crate": "library", "gem": "library",
    "module": "library", "sdk": "library", "framework": "library", "bindings": "library",
    "client": "library", "wrapper": "library", "layer": "library", "parser": "library",
    "encoder": "library", "toolkit": "library", "extension": "library",
    "tool": "tool", "cli": "tool", "utility": "tool", "command-line": "tool", "editor": "tool",
    "generator": "tool", "checker": "tool",
    "service": "service", "microservice": "service",
}  # fmt: skip
_KINDS = "|".join(_KIND_WORDS)
_TAGLINE = re.compile(rf"\A\s*#[^\n]*\n+\s*(?:An?|The) (?:[\w+#.-]+ ){{0,5}}?({_KINDS})\b", re.I)


def described_kind(name: str, text: str) -> str | None:
    """What a passage says its project is: "tallow is a small OCaml library", "# zigpak" then
    "A MessagePack encoder library for Zig." (library, tool or service)."""
    said = re.search(
        rf"(?<![\w-]){re.escape(name)}(?![\w-]),? (?:is|was) an? (?:[\w+#.-]+ ){{0,5}}?"
        rf"({_KINDS})\b",
        text,
        re.I,
    )
    if said is None and text.lstrip().lower().startswith(f"# {name.lower()}\n"):
        said = _TAGLINE.match(text)
    return _KIND_WORDS[said.group(1).lower()] if said is not None else None


def resolve_type(name: str, hinted: str | None, text: str, role: str | None = None) -> str:
    """Type of a kept name: the gazetteer, then what the relations said (person, team), then a
    file's spelling, the head noun, and the context a person's name stands in."""
    known = known_type(name) or _versioned(name)
    if known is not None:
        return known
    if _FILE_NAME.fullmatch(name):
        return "file"
    if (context := context_type(name, text)) is not None:
        return context
    words = name.lower().split()
    if words[-1] in _TEAM_HEADS or (len(words) == 1 and name in ("DevRel", "SRE", "Platform")):
        return "team"
    if words[-1] in _ORG_HEADS and len(words) > 1:
        return "organization"
    if hinted:
        return hinted
    if looks_like_person(name) and person_cue(name, text):
        return "person"
    if given_name(name):
        return "person"
    if name[:1].isupper() and between(name, text, _ORG_BEFORE, _ORG_AFTER):
        return "organization"
    return _type_of(name, role)


# The type of an unknown object of a relation, by the relation (the guidelines' majority).
_ROLE_TYPES = {
    "built_with": "technology", "stores_in": "technology", "runs_on": "technology",
    "reads_from": "technology", "writes_to": "technology", "depends_on": "technology",
    "publishes_to": "technology", "replaced_by": "technology", "uses": "library",
    "integrates_with": "tool", "calls": "service", "routes_to": "service",
    "consumes_from": "dataset", "trained_on": "dataset",
}  # fmt: skip


def _type_of(name: str, role: str | None = None) -> str:
    if (known := known_type(name)) is not None:
        return known
    words = name.lower().split()
    if (known := _versioned(name)) is not None:
        return known  # "PostgreSQL 16", "Kubernetes 1.29"
    head = words[-1] if words else ""
    if head in HEAD_TYPES:
        return HEAD_TYPES[head]
    if "_" in name:
        return "component"
    if _SERVICE_NAME.fullmatch(name):
        return "service"
    if is_technical(name):
        return "technology"
    if name.islower() and " " in name:
        return "component"  # "the report builder"
    return _ROLE_TYPES.get(role or "", "project")


def entity_type(name: str, text: str) -> str:
    """The offline rules' type for ``name`` as written in ``text`` (also used to check a model's
    answer: a type outside the vocabulary is replaced by this one)."""
    return resolve_type(name, None, text)


_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]|[A-Za-z]\d|\d[A-Za-z]|[A-Za-z]\.[a-z]")
_VERSION_TAIL = re.compile(r"\s+v?\d+(?:\.\d+)*\+?$")


def _unlisted_word(word: str) -> bool:
    """A word in no English word list: "httpx", "Kiteline", not "Readings" or "Snowflake"."""
    low = word.lower()
    if not low.isalpha() or len(low) < 3:
        return False
    # Inflected forms the lists hold only as stems: "meshes", "retries", "parallelizes".
    forms = {low}
    for end, stems in (("ies", ("y",)), ("es", ("", "e")), ("s", ("",)), ("ed", ("", "e")),
                       ("ing", ("", "e"))):  # fmt: skip
        if low.endswith(end):
            forms |= {low[: -len(end)] + stem for stem in stems}
    return not any(
        english_word(f) or _plain_word(f) or f in _tech_words() for f in forms if len(f) > 2
    )


_TECH_WORDS = Path(__file__).resolve().parent / "data" / "common_tech_words.txt"


@lru_cache(maxsize=1)
def _tech_words() -> frozenset[str]:
    lines = _TECH_WORDS.read_text(encoding="utf-8").splitlines()
    return frozenset(w.strip() for w in lines if w.strip() and not w.startswith("#"))


def software_type(name: str, *, initial: bool = False) -> str | None:
    """The type of a name a rule may treat as software: the lists' type, else what its spelling
    says when no list knows it (fresh prose names things no list holds). CamelCase, letters
    with digits or a dot ("Love2D", "Node.js", "ggplot2"), an acronym no practice owns, a
    capitalised word in no English word list ("Kiteline") give a technology; a lower-case word
    in none ("httpx", "cpal") a library. Not a person's name, an English word or a generic
    acronym: leaving a name out beats staging a wrong edge. A plain capitalised word that opens
    a sentence or line (``initial``) says nothing by its capital."""
    if (known := known_type(name) or _versioned(name)) is not None:
        return known
    bare = _VERSION_TAIL.sub("", name)
    words = bare.split()
    if not words or len(words) > 3 or given_name(bare) or _FILE_NAME.fullmatch(bare):
        return None
    if re.search(r"(?:Error|Exception|Denied|Failed|NotFound|Exceeded|Invalid)$", bare):
        return None  # "AccessDenied": an error's code, not a product
    if len(words) > 1 and words[-1].lower() in GENERIC_ACRONYMS | KIND_NOUNS:
        return None  # "gRPC API": the name is the word before, if anything
    if len(words) > 1:
        # "Phoenix LiveView"; not two plain capitalised words, which a person's name can be.
        if all(w[:1].isupper() for w in words) and any(_CAMEL.search(w) for w in words):
            return "technology"
        return None
    word = words[0]
    if word.lower() in GENERIC_ACRONYMS:
        return None
    if _CAMEL.search(word) and re.fullmatch(r"[A-Za-z][\w.+#-]*", word):
        return "technology" if any(c.isupper() for c in word) else "library"
    if re.fullmatch(r"[A-Z]{2,6}", word):
        return "technology"
    if word[:1].isupper() and word[1:].islower() and not initial and _unlisted_word(word):
        return "technology"
    if word.islower() and _unlisted_word(word):
        return "library"
    return None
