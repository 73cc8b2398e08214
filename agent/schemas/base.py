"""What every journaling contract shares: the entry, the caps and the strict base model."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

from legacymind.api.patterns import HAS_TEXT

Text400 = Annotated[str, Field(min_length=1, max_length=400)]
MAX_ENTRY = 20000
# An answer to one question: a tenth of an entry. The same cap for v2 replies and v3 answers,
# which answer the same probe (see the v2 ↔ v3 adapter).
MAX_REPLY = 2000
MAX_NODES = 12  # active (≤ MAX_HYPOTHESES) plus merged and retired ones kept for the trail
ExitReason = Literal["threshold", "epsilon", "budget", "guardrail"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _not_blank(value: str) -> str:
    # Checked, not stripped: the text is kept as written (it is signed and quoted back).
    if not value.strip():
        raise PydanticCustomError("blank", "This field may not be blank.")
    return value


# The schema's word for _not_blank: some character that is not white space (a JSON Schema
# pattern is a search, not a full match).
NOT_BLANK = {"pattern": HAS_TEXT}


class JournalEntry(_Model):
    text: Annotated[
        str,
        Field(min_length=1, max_length=MAX_ENTRY, json_schema_extra=NOT_BLANK),
        AfterValidator(_not_blank),
    ]


class CrisisResource(_Model):
    name: str
    contact: str
    region: str


SafetyLevel = Literal["none", "concern", "risk"]


class SafetyNotice(_Model):
    """What the distress detector found in what the writer wrote: the level and the
    warning-sign category, never the words. ``concern``: show the message and resources
    calmly, then let the writer go on; ``risk``: the loop stopped (exit_reason guardrail)."""

    level: SafetyLevel = "none"
    category: str | None = None
    message: str | None = None
    crisis_resources: list[CrisisResource] = []
