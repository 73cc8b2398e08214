"""What every framework returns (the original ``FrameworkOutput``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class FrameworkOutput:
    insights: list[str] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "insights": self.insights,
            "questions": self.questions,
            "next_steps": self.next_steps,
            "meta": self.meta,
        }


class Framework(Protocol):
    name: str

    def analyze(self, text: str) -> FrameworkOutput: ...
