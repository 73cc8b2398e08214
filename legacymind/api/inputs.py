"""Request inputs that refuse names they do not know.

DRF's serializers drop a key they have no field for. A client that misspells a parameter
(``injection_scal``, ``?sesion_id=``) then gets the default, or every row, and no word of it.
Here such a key is a 400 naming it, with the closest name the endpoint does take, like the
journaling agent's bodies (pydantic, ``extra="forbid"``) already answer.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from rest_framework import serializers
from rest_framework.request import Request

# A browsable-API form posts its CSRF token beside the fields: the page's, not the client's.
_FORM_ONLY = frozenset({"csrfmiddlewaretoken"})
# Read from any query string by DRF itself (``?format=json`` picks the renderer).
_QUERY_ALWAYS = frozenset({"format"})
# ``legacymind.api.pagination.Pagination``'s parameters, for a list that pages.
PAGED = frozenset({"limit", "offset"})
_ALSO = "also_accepted"


class Input(serializers.Serializer[Any]):
    """A serializer for what a client sends: every key must be one of its fields."""

    def to_internal_value(self, data: Any) -> Any:
        unknown = self._unknown(data)
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            if unknown and isinstance(exc.detail, dict):
                raise serializers.ValidationError({**exc.detail, **unknown}) from exc
            raise
        if unknown:
            raise serializers.ValidationError(unknown)
        return value

    def _unknown(self, data: Any) -> dict[str, list[str]]:
        if not isinstance(data, Mapping):
            return {}  # DRF's own check answers "expected a dictionary"
        fields = self.fields
        # Every request passes here: in the common case, all names known, one lookup each.
        odd = [name for name in data if name not in fields or fields[name].read_only]
        if not odd:
            return {}
        known = [name for name, field in fields.items() if not field.read_only]
        also = {*_FORM_ONLY, *self._also_accepted()}
        return {str(name): [_unknown_message(str(name), known)] for name in odd if name not in also}

    def _also_accepted(self) -> Iterable[str]:
        # Only the outermost input reads the context: a nested item's keys are its own fields.
        return self.context.get(_ALSO, ()) if self.root is self else ()


def _unknown_message(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if close:
        return f"Unknown field. Did you mean {close[0]}?"
    return f"Unknown field. This endpoint takes: {', '.join(sorted(known))}."


InputT = TypeVar("InputT", bound=Input)


def query_input(request: Request, input_class: type[InputT], *, paged: bool) -> InputT:
    """``input_class`` read from the query string and validated (a 400 on any error). A list
    that pages also takes ``limit`` and ``offset``; every endpoint takes ``format``."""
    also = _QUERY_ALWAYS | PAGED if paged else _QUERY_ALWAYS
    query = input_class(data=request.query_params, context={"request": request, _ALSO: also})
    query.is_valid(raise_exception=True)
    return query


def replacing(patch: type[InputT]) -> type[InputT]:
    """The PUT body for a PATCH body: the same fields, each required, as a replacement is
    whole. (Named after ``patch`` with ``Replace`` for the schema's component.)"""
    fields = {}
    for name, field in patch._declared_fields.items():  # type: ignore[attr-defined]
        # DRF rebuilds a field from its arguments each time a serializer copies it: the
        # arguments must say required too, not only this copy.
        whole = copy.deepcopy(field)
        whole._kwargs["required"] = whole.required = True  # type: ignore[attr-defined]
        fields[name] = whole
    name = patch.__name__.removesuffix("Patch") + "Replace"
    return type(name, (patch,), {**fields, "__module__": patch.__module__})
