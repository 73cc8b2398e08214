"""What the agent answers: each output renders one service result and is what the schema
documents for it. The parts that are spec 004's types (the signed state, the action, the
result, the safety notice) render through ``ContractField`` as the models' own JSON."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from agent.api.fields import ContractField
from agent.schemas import (
    Action,
    AgentResult,
    AgentState,
    ExcavationResult,
    ExcavationState,
    JournalEntry,
    Perspectives,
    Probe,
    Prophecy,
    SafetyNotice,
)
from legacymind.api.schema import ErrorOut


class ReflectionOut(serializers.Serializer[Any]):
    """Renders an agent.schemas.Reflection."""

    journal_entry = ContractField(JournalEntry)
    perspectives = ContractField(Perspectives)
    prophecy = ContractField(Prophecy)
    provider = serializers.CharField(
        help_text="Who wrote it: cli or grok (a chat provider), or offline-composer (the "
        "deterministic composer, when no provider answers)."
    )
    safety = ContractField(SafetyNotice)

    class Meta:
        ref_name = "Reflection"


class ExcavationOut(serializers.Serializer[Any]):
    """Renders an agent.schemas.ExcavationResponse: the next probe, or the result."""

    complete = serializers.BooleanField()
    state = ContractField(ExcavationState, help_text="Send it back as it is with the reply.")
    probe = ContractField(Probe, allow_null=True)
    result = ContractField(ExcavationResult, allow_null=True)
    safety = ContractField(SafetyNotice)

    class Meta:
        ref_name = "ExcavationResponse"


class AgentActOut(serializers.Serializer[Any]):
    """Renders an agent.schemas.AgentActResponse: the next action, or the result."""

    complete = serializers.BooleanField()
    state = ContractField(AgentState, help_text="Send it back as it is with the next turn.")
    action = ContractField(Action, allow_null=True)
    result = ContractField(AgentResult, allow_null=True)
    safety = ContractField(SafetyNotice)

    class Meta:
        ref_name = "AgentActResponse"


class AgentErrorOut(ErrorOut):
    """The project's error envelope, plus the data some agent errors carry for the client."""

    expected = serializers.CharField(
        required=False, help_text="answer_mismatch: the id of the open question or probe."
    )
    retry_after = serializers.IntegerField(
        required=False, help_text="rate_limited: seconds to wait (also the Retry-After header)."
    )
    guardrail = serializers.CharField(
        required=False, help_text="guardrail: the distress detector's level (risk)."
    )
    category = serializers.CharField(
        required=False,
        allow_null=True,
        help_text="guardrail: the warning-sign category (never the matched words).",
    )
    crisis_resources = serializers.ListField(
        child=serializers.DictField(child=serializers.CharField()),
        required=False,
        help_text="guardrail: crisis services to contact now (name, contact, region).",
    )
