"""The agent's request bodies: each input validates one body and its ``params()`` returns the
typed request the service takes. The bodies of ``/excavations`` and ``/v3/agent/act`` are one
of two shapes picked by ``mode`` (``by_mode``); the schema documents them as a oneOf with that
discriminator.

The agent answers a bad field by its dotted path (``journal_entry.text``,
``state.belief_state.nodes.0.text``), as it always has: ``validated`` turns DRF's nested
errors into that envelope."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.utils import PolymorphicProxySerializer
from rest_framework import serializers

from agent.api.fields import ContractField, WrittenText, flat_fields
from agent.excavations import ExcavationReply
from agent.schemas import (
    MAX_ENTRY,
    MAX_REPLY,
    AgentActInitRequest,
    AgentActRequest,
    AgentActStepRequest,
    AgentState,
    ExcavationResult,
    ExcavationState,
    JournalEntry,
)
from legacymind.api.fields import UUIDStringField
from legacymind.api.inputs import Input
from legacymind.errors import ServiceError

InputT = TypeVar("InputT", bound=Input)


class Tag(serializers.ChoiceField):
    """The one value of ``mode`` that picks this shape of a body."""

    def __init__(self, value: str, **kwargs: Any) -> None:
        self.value = value
        super().__init__(choices=[value], **kwargs)


class TagSchema(OpenApiSerializerFieldExtension):
    target_class = Tag

    def map_serializer_field(self, auto_schema: Any, direction: str) -> Any:
        return {"type": "string", "const": self.target.value}


class JournalEntryInput(Input):
    """A journal entry, kept as written."""

    text = WrittenText(max_length=MAX_ENTRY)

    class Meta:
        ref_name = "JournalEntry"


def _entry(data: Mapping[str, Any]) -> JournalEntry:
    return JournalEntry(text=data["text"])


class ReflectionInput(Input):
    """v1: the entry to reflect on."""

    journal_entry = JournalEntryInput()

    class Meta:
        ref_name = "ReflectionRequest"

    def params(self) -> JournalEntry:
        return _entry(self.validated_data["journal_entry"])


class V2ReflectionInput(Input):
    """v2: a completed excavation's signed state (and, optionally, its result as the last step
    returned it; the server rebuilds the result from the state)."""

    state = ContractField(ExcavationState)
    result = ContractField(ExcavationResult, required=False, allow_null=True)

    class Meta:
        ref_name = "V2ReflectionRequest"

    def params(self) -> ExcavationState:
        state: ExcavationState = self.validated_data["state"]
        return state


def _required_for(mode: str) -> dict[str, Any]:
    return {"required": f"This field is required for mode={mode}."}


class ExcavationInitInput(Input):
    """``mode=init``: the entry. The step's fields are taken and not read."""

    mode = Tag("init")
    journal_entry = JournalEntryInput(error_messages=_required_for("init"))
    state = ContractField(ExcavationState, required=False, allow_null=True)
    user_reply = WrittenText(max_length=MAX_REPLY, required=False, allow_null=True)
    expected_probe_id = UUIDStringField(required=False, allow_null=True)

    class Meta:
        ref_name = "ExcavationInit"

    def params(self) -> JournalEntry:
        return _entry(self.validated_data["journal_entry"])


class ExcavationStepInput(Input):
    """``mode=step``: the signed state, the reply and the id of the probe it answers."""

    mode = Tag("step")
    journal_entry = JournalEntryInput(required=False, allow_null=True)
    state = ContractField(ExcavationState, error_messages=_required_for("step"))
    user_reply = WrittenText(max_length=MAX_REPLY, error_messages=_required_for("step"))
    expected_probe_id = UUIDStringField(error_messages=_required_for("step"))

    class Meta:
        ref_name = "ExcavationStep"

    def params(self) -> ExcavationReply:
        data = self.validated_data
        return ExcavationReply(
            state=data["state"],
            user_reply=data["user_reply"],
            expected_probe_id=data["expected_probe_id"],
        )


class AgentActInitInput(Input):
    """``mode=init``: the entry to find the crux of."""

    mode = Tag("init")
    journal_entry = JournalEntryInput()

    class Meta:
        ref_name = "AgentActInit"

    def params(self) -> AgentActInitRequest:
        return AgentActInitRequest(
            mode="init", journal_entry=_entry(self.validated_data["journal_entry"])
        )


class AgentActContinueInput(Input):
    """``mode=continue``: the signed state, and the answer to its open question."""

    mode = Tag("continue")
    state = ContractField(AgentState)
    user_event = serializers.DictField(
        required=False,
        allow_null=True,
        help_text='The answer to the open question: {"answer_to": its action_id, "value": the '
        "option or the writer's words}.",
    )

    class Meta:
        ref_name = "AgentActStep"

    def params(self) -> AgentActStepRequest:
        data = self.validated_data
        return AgentActStepRequest(
            mode="continue", state=data["state"], user_event=data.get("user_event")
        )


EXCAVATION_INPUTS: dict[str, type[Input]] = {
    "init": ExcavationInitInput,
    "step": ExcavationStepInput,
}
ACT_INPUTS: dict[str, type[Input]] = {"init": AgentActInitInput, "continue": AgentActContinueInput}
# What the schema documents for the two bodies: one shape per mode.
EXCAVATION_BODY = PolymorphicProxySerializer(
    component_name="ExcavationBodyDoc",
    serializers=cast(dict[str, Any], EXCAVATION_INPUTS),
    resource_type_field_name="mode",
)
ACT_BODY = PolymorphicProxySerializer(
    component_name="AgentActBody",
    serializers=cast(dict[str, Any], ACT_INPUTS),
    resource_type_field_name="mode",
)


def validated(serializer: InputT) -> InputT:
    """``serializer`` validated; else a 400 naming each invalid field by its dotted path."""
    if not serializer.is_valid():
        raise _invalid(flat_fields(serializer.errors))
    return serializer


def by_mode(data: Any, inputs: Mapping[str, type[Input]]) -> Input:
    """The input for the body's ``mode``, validated."""
    if not isinstance(data, Mapping):
        kind = type(data).__name__
        raise _invalid(
            {"non_field_errors": [f"Invalid data. Expected a dictionary, but got {kind}."]}
        )
    mode = data.get("mode")
    if mode is None:
        raise _invalid({"mode": ["This field is required."]})
    if not isinstance(mode, str) or mode not in inputs:
        raise _invalid({"mode": [f"Must be one of: {', '.join(inputs)}."]})
    return validated(inputs[mode](data=data))


def act_request(data: Any) -> AgentActRequest:
    """A /v3/agent/act body (or the journal page's turn) as the typed request ``agent_act``
    takes; a ServiceError naming each invalid field otherwise."""
    request: AgentActRequest = by_mode(data, ACT_INPUTS).params()  # type: ignore[attr-defined]
    return request


def excavation_request(data: Any) -> JournalEntry | ExcavationReply:
    """A /excavations body: the entry to start from, or the reply to the open probe."""
    request: JournalEntry | ExcavationReply = by_mode(data, EXCAVATION_INPUTS).params()  # type: ignore[attr-defined]
    return request


def _invalid(fields: dict[str, list[str]]) -> ServiceError:
    name, messages = next(iter(fields.items()))
    return ServiceError(f"Invalid input. {name}: {messages[0]}", fields=fields)
