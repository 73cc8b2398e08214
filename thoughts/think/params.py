"""Validation and lenient clamping of the think parameters (specs/002 "Parameter Reference").

Numbers are forgiving like the original's deserialisers: a JSON number or a numeric string is
accepted and clamped into range (the clamp is reported in telemetry); anything else is a 400.
Tags outside ``THINK_TAG_WHITELIST`` are dropped and reported, not rejected.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from legacymind.errors import ServiceError
from thoughts.refs import parse_thought_ref

MAX_CONTENT_BYTES = 100 * 1024
HINTS = ("debug", "build", "plan", "stuck", "question", "conclude")
SUBMODES = ("sarcastic", "philosophical", "empathetic", "problem_solving")
LINK_FIELDS = ("previous_thought_id", "revises_thought", "branch_from")
NUMBER_FIELDS = (
    "injection_scale",
    "significance",
    "confidence",
    "verify_top_k",
    "min_similarity",
    "evidence_limit",
)
MAX_ID_LENGTH = 128  # session_id / chain_id columns
MAX_HYPOTHESIS_CHARS = 10_000
MAX_PATTERNS = 50


class ContentTooLarge(ServiceError):
    error_code = "content_too_large"


@dataclass(frozen=True)
class ThinkParams:
    """The request after validation: every number in range, every link a UUID."""

    content: str
    hint: str | None = None
    injection_scale: int | None = None
    significance: float | None = None
    tags: list[str] = field(default_factory=list)
    tags_dropped: list[str] = field(default_factory=list)
    verbose_analysis: bool = False
    session_id: str | None = None
    chain_id: str | None = None
    links: dict[str, uuid.UUID | None] = field(default_factory=dict)
    confidence: float | None = None
    hypothesis: str | None = None
    needs_verification: bool = False
    verify_top_k: int = 50
    min_similarity: float = 0.6
    evidence_limit: int = 10
    contradiction_patterns: list[str] | None = None
    submode: str | None = None
    is_private: bool = False
    thought_id: uuid.UUID | None = None
    clamped: dict[str, dict[str, Any]] = field(default_factory=dict)


def _number(name: str, value: Any, errors: dict[str, list[str]]) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        errors[name] = ["must be a number"]
        return None
    try:
        number = float(value)
    except ValueError:
        errors[name] = [f"{value!r} is not a number"]
        return None
    except OverflowError:  # a JSON integer of hundreds of digits: no float holds it
        number = math.inf
    if not math.isfinite(number):
        errors[name] = ["must be a finite number"]
        return None
    return number


def _clamp(
    name: str, number: float | None, low: float, high: float, clamped: dict[str, dict[str, Any]]
) -> float | None:
    if number is None:
        return None
    used = min(max(number, low), high)
    if used != number:
        clamped[name] = {"given": number, "used": used}
    return used


def _int_clamp(
    name: str, number: float | None, low: int, high: int, clamped: dict[str, dict[str, Any]]
) -> int | None:
    if number is None:
        return None
    # Halves round up (0.5 -> 1): round() sends them to the even neighbour, so 0.5 turned
    # injection off and 2.5 gave 2.
    used = int(min(max(math.floor(number + 0.5), low), high))
    if used != number:
        clamped[name] = {"given": number, "used": used}
    return used


def _tags(raw: list[str] | None) -> tuple[list[str], list[str]]:
    allowed = set(settings.THINK_TAG_WHITELIST)
    kept: list[str] = []
    dropped: list[str] = []
    for tag in raw or []:
        norm = tag.strip().lower()
        if norm in allowed:
            if norm not in kept:
                kept.append(norm)
        elif tag not in dropped:
            dropped.append(tag)
    return kept, dropped


def _short_text(name: str, value: str | None, errors: dict[str, list[str]]) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if len(value) > MAX_ID_LENGTH:
        errors[name] = [f"at most {MAX_ID_LENGTH} characters"]
    return value or None


def think_params(
    *,
    content: str,
    hint: str | None = None,
    injection_scale: Any = None,
    tags: list[str] | None = None,
    significance: Any = None,
    verbose_analysis: bool = False,
    session_id: str | None = None,
    chain_id: str | None = None,
    previous_thought_id: str | None = None,
    revises_thought: str | None = None,
    branch_from: str | None = None,
    confidence: Any = None,
    hypothesis: str | None = None,
    needs_verification: bool = False,
    verify_top_k: Any = None,
    min_similarity: Any = None,
    evidence_limit: Any = None,
    contradiction_patterns: list[str] | None = None,
    submode: str | None = None,
    is_private: bool = False,
    thought_id: str | None = None,
) -> ThinkParams:
    """Validate and clamp; raise one ServiceError naming every bad field."""
    errors: dict[str, list[str]] = {}
    _content_check(content, errors)
    numbers = _numbers(
        (injection_scale, significance, confidence, verify_top_k, min_similarity, evidence_limit),
        errors,
    )
    links = _links((previous_thought_id, revises_thought, branch_from), errors)
    own_id = _own_id(thought_id, errors)
    norm_submode = _submode(submode, errors)
    _hypothesis_check(hypothesis, errors)
    session = _short_text("session_id", session_id, errors)
    chain = _short_text("chain_id", chain_id, errors)
    _raise_errors(errors)

    kept, dropped = _tags(tags)
    ranged, clamped = _ranged(numbers)
    return ThinkParams(
        content=content,
        hint=hint.strip().lower() if hint and hint.strip() else None,
        tags=kept,
        tags_dropped=dropped,
        verbose_analysis=verbose_analysis,
        session_id=session,
        chain_id=chain,
        links=links,
        hypothesis=hypothesis.strip() if hypothesis and hypothesis.strip() else None,
        needs_verification=needs_verification,
        contradiction_patterns=_patterns(contradiction_patterns),
        submode=norm_submode,
        is_private=is_private,
        thought_id=own_id,
        clamped=clamped,
        **ranged,
    )


def _content_check(content: str, errors: dict[str, list[str]]) -> None:
    """Empty content is a field error; content over the size limit raises at once (413)."""
    if not content or not content.strip():
        errors["content"] = ["must not be empty"]
    elif len(content.encode("utf-8")) > MAX_CONTENT_BYTES:
        size = len(content.encode("utf-8"))
        raise ContentTooLarge(
            f"content is {size} bytes; the limit is {MAX_CONTENT_BYTES} (100 KB)",
            fields={"content": [f"at most {MAX_CONTENT_BYTES} bytes"]},
        )


def _numbers(raw: tuple[Any, ...], errors: dict[str, list[str]]) -> dict[str, float | None]:
    """The values of ``NUMBER_FIELDS`` (in that order) read as numbers."""
    return {
        name: _number(name, value, errors) for name, value in zip(NUMBER_FIELDS, raw, strict=True)
    }


def _links(
    raw: tuple[str | None, str | None, str | None], errors: dict[str, list[str]]
) -> dict[str, uuid.UUID | None]:
    """Each of ``LINK_FIELDS`` parsed (None when left out or blank)."""
    links: dict[str, uuid.UUID | None] = {}
    for name, value in zip(LINK_FIELDS, raw, strict=True):
        links[name] = None
        if value is not None and value.strip():
            try:
                links[name] = parse_thought_ref(value)
            except ValueError as exc:
                errors[name] = [str(exc)]
    return links


def _own_id(thought_id: str | None, errors: dict[str, list[str]]) -> uuid.UUID | None:
    if not thought_id:
        return None
    try:
        return parse_thought_ref(thought_id)
    except ValueError as exc:
        errors["thought_id"] = [str(exc)]
        return None


def _submode(submode: str | None, errors: dict[str, list[str]]) -> str | None:
    norm_submode = submode.strip().lower().replace("-", "_") if submode else None
    if norm_submode == "problemsolving":
        norm_submode = "problem_solving"
    if norm_submode is not None and norm_submode not in SUBMODES:
        errors["submode"] = [f"must be one of {', '.join(SUBMODES)}"]
    return norm_submode


def _hypothesis_check(hypothesis: str | None, errors: dict[str, list[str]]) -> None:
    if hypothesis is not None and len(hypothesis) > MAX_HYPOTHESIS_CHARS:
        errors["hypothesis"] = [f"at most {MAX_HYPOTHESIS_CHARS} characters"]


def _patterns(contradiction_patterns: list[str] | None) -> list[str] | None:
    if not contradiction_patterns:
        return None
    patterns = [p.strip().lower() for p in contradiction_patterns if p.strip()][:MAX_PATTERNS]
    return patterns or None


def _raise_errors(errors: dict[str, list[str]]) -> None:
    if errors:
        first = next(iter(errors))
        raise ServiceError(f"Invalid input. {first}: {errors[first][0]}", fields=errors)


def _ranged(numbers: dict[str, float | None]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Each number clamped into its range, as ``ThinkParams`` fields, and what was clamped; the
    verification's numbers default to the settings."""
    clamped: dict[str, dict[str, Any]] = {}
    top_k = _int_clamp("verify_top_k", numbers["verify_top_k"], 1, 500, clamped)
    limit = _int_clamp("evidence_limit", numbers["evidence_limit"], 1, 25, clamped)
    min_sim = _clamp("min_similarity", numbers["min_similarity"], 0.0, 1.0, clamped)
    ranged = {
        "verify_top_k": settings.THINK_VERIFY_TOPK if top_k is None else top_k,
        "min_similarity": settings.THINK_VERIFY_MIN_SIM if min_sim is None else min_sim,
        "evidence_limit": settings.THINK_VERIFY_EVIDENCE_LIMIT if limit is None else limit,
        "injection_scale": _int_clamp("injection_scale", numbers["injection_scale"], 0, 3, clamped),
        "significance": _clamp("significance", numbers["significance"], 0.0, 1.0, clamped),
        "confidence": _clamp("confidence", numbers["confidence"], 0.0, 1.0, clamped),
    }
    return ranged, clamped
