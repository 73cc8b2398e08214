"""The v1 reflections' contracts (specs/README.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import JournalEntry, SafetyNotice, _Model

# --- v1 reflections -----------------------------------------------------------------------------
Framework = Literal["buddhism", "stoicism", "existentialism", "neoadlerianism", "other"]


class Perspective(_Model):
    framework: Framework
    other_framework_name: str | None = None
    core_principle_invoked: str
    challenge_framing: str
    practical_experiment: str
    potential_trap: str
    key_metaphor: str


class Perspectives(_Model):
    items: list[Perspective]


class AgreementItem(_Model):
    framework_a: Framework
    framework_b: Framework
    stance: Literal["agree", "diverge", "nuanced"]
    notes: str


class TensionItem(_Model):
    frameworks: list[Framework] = Field(min_length=2)
    explanation: str


class Prophecy(_Model):
    agreement_scorecard: list[AgreementItem]
    tension_summary: list[TensionItem]
    synthesis: str
    what_is_lost_by_blending: list[str]


class Reflection(_Model):
    journal_entry: JournalEntry
    perspectives: Perspectives
    prophecy: Prophecy
    # Who wrote it: "cli" / "grok" (chat chain) or "offline-composer" (deterministic fallback).
    provider: str = "offline-composer"
    safety: SafetyNotice = Field(default_factory=SafetyNotice)


class ReflectionRequest(_Model):
    journal_entry: JournalEntry
