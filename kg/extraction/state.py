"""What the offline extractor's passes share: the passage's state, one sentence's scan, the
clean-up's result, the constants several passes read, and the two writes every pass makes (a
phrase into the name table, an edge into the edge table)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kg.extraction.phrases import Sentence

AUX = {"is", "are", "was", "were"}
DOMAIN = re.compile(r"(?:[\w-]+\.)+(?:com|org|net|dev|co|uk|de|fr|nl|eu|app|me)", re.I)
# A version written right after a name is part of it: "PostgreSQL 16", "Python 3.9+", "Mistral 7B".
VERSION_TOKEN = re.compile(r"v?\d+(?:\.\d+)*\+?|\d+[bB]|LTS", re.IGNORECASE)
MIGRATION_VERBS = {
    "moved", "move", "moves", "moving", "migrated", "migrate", "migrates", "migrating",
    "switched", "switch", "switches", "switching", "ported", "port", "ports", "porting", "went",
    "transitioned", "converted", "cut",
}  # fmt: skip


@dataclass
class State:
    """What one passage's sentences share: the topic (a README's title), the last subject and
    object for "it" and "which", phrases seen only indefinitely, and each edge's sentence."""

    topic: str | None = None
    titled: bool = False  # the topic is the passage's title (a heading, a log's opening line)
    last_subject: str | None = None
    last_object: str | None = None
    sentence: str = ""
    indefinite: set[str] = field(default_factory=set)
    owned: set[str] = field(default_factory=set)  # "its core solver": a part of the topic
    explicit: set[str] = field(default_factory=set)  # ends of "a -> b" and snake_case relations
    evidence: dict[tuple[str, str], str] = field(default_factory=dict)


@dataclass
class Scan:
    """What one sentence's relations share while it is scanned verb by verb: the subjects of the
    last clause, where its objects ended (no subject reaches past that), and its last object."""

    subjects: list[str] = field(default_factory=list)
    clause_start: int = 0
    last_object: str | None = None


@dataclass
class Cleaned:
    """What ``_finish`` makes of the raw phrases: the clean names (lower -> surface) and the
    types the relations hinted for them, what each raw phrase became (``None``: refused), and
    the edges and evidence a possessive adds ("Quillstack's search service")."""

    final: dict[str, str] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    mapping: dict[str, str | None] = field(default_factory=dict)
    extra: dict[tuple[str, str], str] = field(default_factory=dict)
    extra_evidence: dict[tuple[str, str], str] = field(default_factory=dict)


class ExtractorBase:
    """The two writes every rule makes: a phrase into the passage's names, an edge."""

    def _name(self, sent: Sentence, span: tuple[int, int], names: dict[str, str]) -> str:
        surface = sent.span(*span)
        key = surface.lower()
        names.setdefault(key, surface)
        return key

    @staticmethod
    def _edge(edges: dict[tuple[str, str], str], src: str, dst: str, rel: str) -> None:
        if src != dst:
            edges.setdefault((src, dst), rel)

    def _connect(
        self, edges: dict[tuple[str, str], str], state: State, src: str, dst: str, rel: str
    ) -> None:
        """An edge and, unless it already has one, the sentence it came from as evidence."""
        self._edge(edges, src, dst, rel)
        state.evidence.setdefault((src, dst), state.sentence)

    def _built_with(
        self,
        sent: Sentence,
        named: tuple[int, int],
        tech: str,
        names: dict[str, str],
        edges: dict[tuple[str, str], str],
        state: State,
    ) -> None:
        """The name at ``named`` is built with the known language or framework ``tech``."""
        key = self._name(sent, named, names)
        names.setdefault(tech.lower(), tech)
        self._connect(edges, state, key, tech.lower(), "built_with")
