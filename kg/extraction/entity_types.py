"""Entity types for the offline extractor: the gazetteer first, then what the relations hinted
(person, team), a file's spelling, the noun written next to a name ("the `renders` queue", "host
mon-2"), the head noun, and the context a person's name stands in."""

from __future__ import annotations

import re

from kg.extraction.lexicon import HEAD_TYPES
from kg.extraction.names import FILE_NAME as _FILE_NAME
from kg.extraction.names import known_type
from kg.extraction.phrases import is_technical


def looks_like_person(name: str) -> bool:
    """ "Gabriel", "Noor", "Tomás", "Ana Lima": one or two plain capitalised words."""
    parts = name.split()
    return (
        1 <= len(parts) <= 2
        and all(p.isalpha() and p[:1].isupper() and p[1:].islower() for p in parts)
        and name.lower().split()[-1] not in HEAD_TYPES
    )


PERSON_CUE = (
    r"(?:\b(?i:by|thanks(?: to)?|thanked|asked|ask|told|pinged|cc|merged|walked|paired with"
    r"|handed (?:it )?to|escalations go to|owner is|maintainer is)\s+{0}\b"
    r"|\b{0}(?:'s|\u2019s)?\s+(?:did|does|said|says|asked|wrote|reviewed|merged|fixed|owns"
    r"|manages|leads|maintains|joined|left|suggested|pointed|paired|took|handles|added|noticed"
    r"|found|spotted|reported|helped|approved|shipped|rewrote|thinks|wants|will|has|had"
    r"|change|patch|review|PR|team)\b"
    r"|\b{0}\s*(?:,\s*who\b|\(@))"
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
_HOST_NOUNS = r"hosts?|clusters?|nodes?|boxe?s?|servers?|instances?|vms?|machines?|racks?"
_TABLE_PREFIX = re.compile(r"(?:fct|dim|stg|raw|int|agg|tbl)_\w+|\w+_(?:events|logs|raw|daily)")
_HOSTNAME = re.compile(r"[a-z]+(?:-[a-z0-9]+)*-\d+[a-z]?")


def context_type(name: str, text: str) -> str | None:
    """Hosts and clusters are components, tables, topics, queues and buckets are datasets,
    by the noun written next to the name or by its spelling ("prod-eu-1", "fct_orders")."""
    quoted = r"[`'\"]?" + re.escape(name) + r"[`'\"]?"
    for kinds, kind in _LISTED_KINDS:
        if re.search(rf"(?i:\b(?:{kinds})):[^.:\n]*?{quoted}", text):
            return kind  # "three internal services: pricing, inventory": each is a service
    if re.search(
        rf"(?i:\b(?:{_DATASET_NOUNS}))\s+{quoted}|{quoted}\s+(?i:(?:{_DATASET_NOUNS})\b)", text
    ):
        return "dataset"
    if re.search(rf"(?i:\b(?:{_HOST_NOUNS}))\s+{quoted}|{quoted}\s+(?i:(?:{_HOST_NOUNS})\b)", text):
        return "component" if not known_type(name) else None
    if _TABLE_PREFIX.fullmatch(name) or re.fullmatch(
        r"[a-z]+(?:[._-][a-z]+)*\.(?:raw|clean|v\d)", name
    ):
        return "dataset"
    if _HOSTNAME.fullmatch(name):
        return "component"
    return None


def resolve_type(name: str, hinted: str | None, text: str) -> str:
    """Type of a kept name: the gazetteer, then what the relations said (person, team), then a
    file's spelling, the head noun, and the context a person's name stands in."""
    known = known_type(name)
    if known is None and len(name.split()) > 1:
        known = known_type(" ".join(name.split()[:-1]))  # "PostgreSQL 16", "Unity 2022"
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
    if looks_like_person(name) and re.search(PERSON_CUE.format(re.escape(name)), text):
        return "person"
    return _type_of(name)


def _type_of(name: str) -> str:
    if (known := known_type(name)) is not None:
        return known
    words = name.lower().split()
    if len(words) > 1 and (known := known_type(" ".join(name.split()[:-1]))) is not None:
        return known  # "PostgreSQL 16", "Kubernetes 1.29"
    head = words[-1] if words else ""
    if head in HEAD_TYPES:
        return HEAD_TYPES[head]
    if "_" in name:
        return "component"
    if re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)+", name):
        return "service"
    if is_technical(name):
        return "technology"
    if name.islower() and " " in name:
        return "component"  # "the report builder"
    return "project"


def entity_type(name: str, text: str) -> str:
    """The offline rules' type for ``name`` as written in ``text`` (also used to check a model's
    answer: a type outside the vocabulary is replaced by this one)."""
    return resolve_type(name, None, text)
