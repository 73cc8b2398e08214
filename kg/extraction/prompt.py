"""The instruction sent to extractor models: one JSON object matching the schema, nothing else."""

from __future__ import annotations

import hashlib

SYSTEM = (
    "You extract a knowledge graph from a note. Answer with ONE JSON object and nothing else: "
    '{"entities": [{"id": "e1", "label": "...", "type": "...", "aliases": [], '
    '"confidence": 0.0-1.0}], "edges": [{"from_id": "e1", "to_id": "e2", '
    '"relation": "snake_case_verb", "confidence": 0.0-1.0, "evidence": "the sentence that '
    'states it, copied verbatim"}], "truncated": false}. '
    "Entities are named things (people, teams, services, components, technologies, tools, "
    "projects, datasets) written as they appear in the text, without a leading article. Never "
    "make an entity of a pronoun, a sentence starter or a label such as 'Sources:'. Edges link "
    "entity ids that exist, each with the one sentence of the text that states it, relations in snake_case (uses, depends_on, part_of, reads_from, "
    "writes_to, manages, owns, replaced_by, ...). Empty lists are fine when the text names "
    "nothing."
)


def build_prompt(text: str, *, truncated: bool) -> str:
    note = " (cut to fit; set truncated to true)" if truncated else ""
    return f"{SYSTEM}\n\nText{note}:\n<<<\n{text}\n>>>\n"


def prompt_hash(prompt: str) -> str:
    return hashlib.sha256(prompt.encode()).hexdigest()
