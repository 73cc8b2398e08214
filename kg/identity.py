"""How candidates, entities and blocklist items are matched: by normalised name."""

from __future__ import annotations


def norm(name: str) -> str:
    """Case- and whitespace-insensitive identity of a name."""
    return " ".join(name.split()).lower()


def clean(name: str) -> str:
    return " ".join(name.split())


def edge_key(source: str, target: str, rel_type: str) -> str:
    return f"{norm(source)}|{rel_type.strip().lower()}|{norm(target)}"


def observation_key(name: str, entity_name: str) -> str:
    """An observation's identity: its name on its entity's (blank: of no entity)."""
    return f"{norm(entity_name)}|{norm(name)}"
