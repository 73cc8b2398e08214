"""The tools: each is a name, the serializer that validates its arguments (the REST endpoint's
where there is one), an output schema, hints, and a function that calls one service or
selector as the caller. ``tool_call`` runs one, synchronously, and says what went wrong in
words a model can act on: the field, and the closest valid name."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from rest_framework import serializers
from rest_framework.exceptions import APIException
from rest_framework.utils.encoders import JSONEncoder

from legacymind.errors import ServiceError
from mcpserver.schemas import serializer_schema

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Call:
    """Who calls, with what validated arguments, and where progress goes."""

    user: User
    data: dict[str, Any]
    form: Any  # the validated serializer, for its mapping methods (filters(), params())
    progress: Progress = field(default=lambda done, total: None)


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input: type[serializers.Serializer[Any]]
    run: Callable[[Call], dict[str, Any]]
    output: type[serializers.Serializer[Any]] | dict[str, Any] | None = None
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    drop_in: bool = False  # one of @modelcontextprotocol/server-memory's tools

    def input_schema(self) -> dict[str, Any]:
        return serializer_schema(self.input, "request")

    def output_schema(self) -> dict[str, Any] | None:
        if self.output is None or isinstance(self.output, dict):
            return self.output
        return serializer_schema(self.output, "response")


class ToolError(Exception):
    """A call the tool refuses: reported to the model as a tool error, not a protocol one."""


TOOLS: dict[str, Tool] = {}


def register(tool: Tool) -> Tool:
    TOOLS[tool.name] = tool
    return tool


def tool_find(name: str) -> Tool:
    tool = TOOLS.get(name)
    if tool is None:
        close = difflib.get_close_matches(name, list(TOOLS), n=1, cutoff=0.5)
        hint = f" Did you mean {close[0]}?" if close else f" Tools: {', '.join(sorted(TOOLS))}."
        raise ToolError(f"Unknown tool {name!r}.{hint}")
    return tool


def _flatten(detail: Any, prefix: str = "") -> list[str]:
    if isinstance(detail, dict):
        return [
            line
            for key, value in detail.items()
            for line in _flatten(value, f"{prefix}.{key}" if prefix else str(key))
        ]
    if isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            return [f"{prefix}: {' '.join(str(item) for item in detail)}"]
        return [line for i, item in enumerate(detail) for line in _flatten(item, f"{prefix}[{i}]")]
    return [f"{prefix}: {detail}" if prefix else str(detail)]


def validation_message(exc: serializers.ValidationError) -> str:
    return "Invalid arguments. " + "; ".join(_flatten(exc.detail))


def as_json(value: Any) -> Any:
    """``value`` with UUIDs, datetimes and decimals as JSON has them, as REST answers them."""
    return json.loads(json.dumps(value, cls=JSONEncoder))


def tool_call(
    *, user: User, name: str, arguments: dict[str, Any] | None, progress: Progress | None = None
) -> dict[str, Any]:
    """Validate ``arguments`` with the tool's serializer and run it as ``user``. Raises
    ``ToolError`` with a message naming what was wrong."""
    text = tool_text(user=user, name=name, arguments=arguments, progress=progress)
    result: dict[str, Any] = json.loads(text)
    return result


def tool_text(
    *, user: User, name: str, arguments: dict[str, Any] | None, progress: Progress | None = None
) -> str:
    """``tool_call``'s answer as JSON text, as REST writes its values: what a client reads as
    the text rendering, and parses once for the structured result."""
    tool = tool_find(name)
    data = tool.input(data=arguments or {}, context={"request": _Caller(user)})
    try:
        data.is_valid(raise_exception=True)
        call = Call(user, dict(data.validated_data), data, progress or _ignore)
        return json.dumps(tool.run(call), cls=JSONEncoder, ensure_ascii=False)
    except serializers.ValidationError as exc:
        raise ToolError(validation_message(exc) + _closest_choices(data, arguments or {})) from None
    except ServiceError as exc:
        fields = f" ({'; '.join(_flatten(exc.fields))})" if exc.fields else ""
        raise ToolError(f"{exc.detail}{fields}") from None
    except (PermissionDenied, APIException) as exc:
        raise ToolError(str(exc) or "Not allowed.") from None


def _closest_choices(form: serializers.Serializer[Any], arguments: dict[str, Any]) -> str:
    """For a value that is not one of a field's choices, the closest that is."""
    hints = []
    for name, spec in form.fields.items():
        given = arguments.get(name)
        if not isinstance(spec, serializers.ChoiceField) or not isinstance(given, str):
            continue
        choices = [str(choice) for choice in spec.choices]
        if given in choices:
            continue
        close = difflib.get_close_matches(given, choices, n=1, cutoff=0.5)
        if close:
            hints.append(f" {name}: did you mean {close[0]}?")
    return "".join(hints)


def _ignore(done: int, total: int) -> None:
    return None


@dataclass(frozen=True)
class _Caller:
    """What the API's fields read from a request's context: who asks."""

    user: User
