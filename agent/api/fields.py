"""Fields of the agent's inputs and outputs.

``ContractField`` carries a value of one of spec 004's types (agent.schemas): the signed state,
the action union, the result. Those types stay pydantic models because the spec defines them
so and the state's signature is an HMAC over the model's canonical JSON (agent.integrity): the
field validates the client's JSON into the model and renders the model's JSON, and the schema
shows the model's own JSON Schema."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.validators import ProhibitNullCharactersValidator
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.plumbing import ResolvedComponent
from pydantic import BaseModel, TypeAdapter, ValidationError
from rest_framework import serializers

from legacymind.api.fields import StringField
from legacymind.api.patterns import HAS_TEXT

BLANK = "This field may not be blank."


class ContractField(serializers.Field):  # type: ignore[type-arg]
    """A value of ``contract`` (a pydantic model or an annotated union of models)."""

    def __init__(self, contract: Any, **kwargs: Any) -> None:
        self.contract = contract
        self.adapter: TypeAdapter[Any] = TypeAdapter(contract)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> Any:
        try:
            return self.adapter.validate_python(data)
        except ValidationError as exc:
            raise serializers.ValidationError(contract_errors(exc)) from exc

    def to_representation(self, value: Any) -> Any:
        return self.adapter.dump_python(value, mode="json")


def contract_errors(exc: ValidationError) -> dict[str, list[str]]:
    """Path inside the value (dotted) → pydantic's messages."""
    fields: dict[str, list[str]] = {}
    for err in exc.errors():
        path = ".".join(str(p) for p in err["loc"]) or "non_field_errors"
        fields.setdefault(path, []).append(err["msg"])
    return fields


class WrittenText(StringField):
    """What a writer wrote (an entry, a reply): kept as written (it is signed and quoted
    back), so not stripped, and refused when it holds nothing but white space. Never stored
    in a table, so a NUL is the writer's business, as the pydantic contract always took it."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(trim_whitespace=False, **kwargs)
        self.validators = [
            v for v in self.validators if not isinstance(v, ProhibitNullCharactersValidator)
        ]

    def to_internal_value(self, data: Any) -> str:
        text = super().to_internal_value(data)
        if not text.strip():
            raise serializers.ValidationError(BLANK, code="blank")
        return text


def flat_fields(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested error detail as the agent answers it: one dotted path per field
    (``journal_entry.text``, ``state.belief_state.nodes.0.text``)."""
    if isinstance(detail, Mapping):
        flat: dict[str, list[str]] = {}
        for key, value in detail.items():
            path = str(key) if not prefix else f"{prefix}.{key}"
            if key == "non_field_errors" and prefix:
                path = prefix
            for name, messages in flat_fields(value, path).items():
                flat.setdefault(name, []).extend(messages)
        return flat
    if isinstance(detail, list) and any(isinstance(v, Mapping | list) for v in detail):
        flat = {}
        for index, value in enumerate(detail):
            for name, messages in flat_fields(value, f"{prefix}.{index}").items():
                flat.setdefault(name, []).extend(messages)
        return flat
    messages = detail if isinstance(detail, list) else [detail]
    return {prefix or "non_field_errors": [str(m) for m in messages]}


class ContractFieldSchema(OpenApiSerializerFieldExtension):
    """The contract's JSON Schema: a model is its own component, a union the oneOf pydantic
    writes for it (its members components)."""

    target_class = ContractField
    match_subclasses = True

    def map_serializer_field(self, auto_schema: Any, direction: str) -> Any:
        contract = self.target.contract
        if isinstance(contract, type) and issubclass(contract, BaseModel):
            # One component for both directions: pydantic writes one schema for the model
            # (the state a client sends back is the one it was sent).
            return auto_schema.resolve_serializer(contract, "response").ref
        schema = self.target.adapter.json_schema(
            ref_template="#/components/schemas/{model}", mode="serialization"
        )
        for name, sub_schema in schema.pop("$defs", {}).items():
            component = ResolvedComponent(
                name=name, type=ResolvedComponent.SCHEMA, object=name, schema=sub_schema
            )
            auto_schema.registry.register_on_missing(component)
        # drf-spectacular adds a nullable field's null to a oneOf, beside the discriminated
        # members: null goes beside the whole union instead.
        return {"anyOf": [schema]} if self.target.allow_null else schema


class WrittenTextSchema(OpenApiSerializerFieldExtension):
    target_class = WrittenText

    def map_serializer_field(self, auto_schema: Any, direction: str) -> Any:
        # A JSON Schema pattern is a search: some character that is not white space.
        schema: dict[str, Any] = {"type": "string", "minLength": 1, "pattern": HAS_TEXT}
        if self.target.max_length is not None:
            schema["maxLength"] = self.target.max_length
        return schema
