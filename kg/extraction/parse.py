"""Model output -> :class:`Extraction`: strip code fences, repair once by brace matching,
validate against ``kg/schemas/kg_extraction.schema.json``, drop edges to unknown ids."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema

from kg.extraction.types import ExtractedEdge, ExtractedEntity

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "kg_extraction.schema.json"
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)


class ParseError(ValueError):
    """The model's answer is not a valid extraction, even after one repair."""


@lru_cache(maxsize=1)
def _validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA_PATH.read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def strip_fences(raw: str) -> str:
    match = _FENCE.search(raw)
    if match:
        return match.group(1).strip()
    # An opening fence the model never closed.
    return re.sub(r"^```[a-zA-Z0-9_-]*\s*", "", raw.strip()).strip()


def repair(raw: str) -> str:
    """The first balanced ``{...}`` object in ``raw``. If the text ends inside it (a cut-off or
    unclosed answer), keep everything up to the last closed array or object and close what is
    still open. One pass, no guessing beyond bracket structure."""
    start = raw.find("{")
    if start < 0:
        raise ParseError("no JSON object in the output")
    stack: list[str] = []
    last_closed: tuple[int, list[str]] | None = None
    in_string = escaped = False
    for pos in range(start, len(raw)):
        char = raw[pos]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]":
            if not stack or stack[-1] != char:
                raise ParseError("mismatched brackets in the output")
            stack.pop()
            if not stack:
                return raw[start : pos + 1]
            last_closed = (pos, list(stack))
    if last_closed is None:
        raise ParseError("the JSON object in the output is cut off")
    pos, open_ = last_closed
    return raw[start : pos + 1] + "".join(reversed(open_))


def _load(raw: str) -> Any:
    text = strip_fences(raw)
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return json.loads(repair(text))
    except ValueError as exc:
        raise ParseError(f"output is not JSON even after repair: {exc}") from exc


def _snake(relation: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", relation.strip().lower()).strip("_") or "related_to"


def _evidence(value: Any) -> str:
    """The model's evidence sentence, one line, bounded; anything not a string is none."""
    return " ".join(value.split())[:2000] if isinstance(value, str) else ""


def parse_extraction(
    raw: str, *, default_entity_conf: float = 0.8, default_edge_conf: float = 0.7
) -> tuple[list[ExtractedEntity], list[ExtractedEdge], int]:
    """Entities and edges from a model's answer, and how many edges were dropped because they
    referenced ids that no entity has."""
    data = _load(raw)
    errors = sorted(_validator().iter_errors(data), key=lambda e: list(e.path))
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.path) or "(root)"
        raise ParseError(f"output does not match the extraction schema at {where}: {first.message}")
    labels: dict[str, str] = {}
    entities: dict[str, ExtractedEntity] = {}
    for item in data["entities"]:
        label = " ".join(item["label"].split())
        if not label or item["id"] in labels:
            continue
        labels[item["id"]] = label
        key = label.lower()
        if key in entities:
            continue
        entities[key] = ExtractedEntity(
            name=label,
            entity_type=(item.get("type") or "concept").strip().lower()[:64] or "concept",
            confidence=float(item.get("confidence", default_entity_conf)),
            aliases=tuple(a.strip() for a in item.get("aliases", []) if a.strip()),
        )
    edges: dict[tuple[str, str, str], ExtractedEdge] = {}
    dropped = 0
    for item in data["edges"]:
        src, dst = labels.get(item["from_id"]), labels.get(item["to_id"])
        if src is None or dst is None:
            dropped += 1
            continue
        if src.lower() == dst.lower():
            continue
        rel = _snake(item["relation"])
        edges.setdefault(
            (src.lower(), dst.lower(), rel),
            ExtractedEdge(
                src,
                dst,
                rel,
                float(item.get("confidence", default_edge_conf)),
                evidence=_evidence(item.get("evidence")),
            ),
        )
    return list(entities.values()), list(edges.values()), dropped
