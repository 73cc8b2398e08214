"""Request inputs that refuse names they do not know.

DRF's serializers drop a key they have no field for. A client that misspells a parameter
(``injection_scal``, ``?sesion_id=``) then gets the default, or every row, and no word of it.
Here such a key is a 400 naming it, with the closest name the endpoint does take; every JSON
endpoint's input serializer, the journaling agent's included, refuses unknown keys this way.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from django.http import QueryDict
from rest_framework import serializers
from rest_framework.request import Request

from legacymind.errors import NotFound

# A browsable-API form posts its CSRF token beside the fields: the page's, not the client's.
_FORM_ONLY = frozenset({"csrfmiddlewaretoken"})
# Read from any query string by DRF itself (``?format=json`` picks the renderer).
_QUERY_ALWAYS = frozenset({"format"})
# ``legacymind.api.pagination.Pagination``'s parameters, for a list that pages.
PAGED = frozenset({"limit", "offset"})
_ALSO = "also_accepted"


class QuickFields:
    # Mixin for a serializer built on every request (a comment, not a docstring: a docstring
    # would become the schema description of every input that uses it). Its fields are copied
    # from one prototype of the class instead of deep-copied from the declarations each time.
    # DRF's Serializer.get_fields deep-copies every declared field per instance, and a field's
    # deep copy calls its __init__ again: on think's input (twenty-odd fields) that was most of
    # the time spent validating the body. A prototype is deep-copied once per class; each
    # instance then takes a shallow copy of each field, which gets its own binding (name,
    # parent, source); a list's child is copied and bound to its list, and a nested serializer
    # is deep-copied as DRF does.

    _prototype_fields: dict[str, Any] | None = None

    def get_fields(self) -> dict[str, Any]:
        cls = type(self)
        proto = cls.__dict__.get("_prototype_fields")
        if proto is None:
            proto = copy.deepcopy(self._declared_fields)  # type: ignore[attr-defined]
            cls._prototype_fields = proto
        return {name: _fresh(field) for name, field in proto.items()}


def _fresh(field: Any) -> Any:
    # A copy that shares the prototype's settings (validators, messages: never changed once
    # made) and gets its own binding. A nested serializer is deep-copied as DRF does; a list's
    # or dict's child is copied the same way and made the copy's, as the field's __init__ does.
    if hasattr(field, "_declared_fields"):
        return copy.deepcopy(field)
    new = object.__new__(type(field))
    new.__dict__.update(field.__dict__)
    child = field.__dict__.get("child")
    if child is not None:
        new.child = _fresh(child)
        new.child.parent = new  # bound in the prototype already: only its parent is new
    return new


class Input(serializers.Serializer[Any]):
    """A serializer for what a client sends: every key must be one of its fields."""

    def to_internal_value(self, data: Any) -> Any:
        unknown = {**self._unknown(data), **self._mistyped(data)}
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            if unknown and isinstance(exc.detail, dict):
                raise serializers.ValidationError({**exc.detail, **unknown}) from exc
            if self.root is self and _only_missing_references(exc.get_codes()):
                # Well-formed, but naming a row that is not there (or not the requester's to
                # see): a 404 like a missing object in the path, with the fields named.
                fields = dict(exc.detail) if isinstance(exc.detail, dict) else {}
                raise NotFound(_first_message(exc.detail), fields=fields) from exc
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

    def _mistyped(self, data: Any) -> dict[str, list[str]]:
        # DRF reads "5" as 5, "true" and 1 as True, 5 as "5": a JSON body means its types, and
        # the schema says which. A query string has only text, read as DRF reads it.
        if not isinstance(data, Mapping) or isinstance(data, QueryDict):
            return {}
        wrong = {}
        for name, value in data.items():
            field = self.fields.get(name)
            if field is None or value is None or field.read_only:
                continue
            expected = _json_type(field)
            if expected is not None and not _is_json_type(value, expected):
                wrong[str(name)] = [str(field.error_messages["invalid"])]
        return wrong

    def _also_accepted(self) -> Iterable[str]:
        # Only the outermost input reads the context: a nested item's keys are its own fields.
        return self.context.get(_ALSO, ()) if self.root is self else ()


# The error codes of a field that names a row by its id: DRF's related fields, and the
# project's that say ``refers = True`` (``kg.api.fields.SourceThought``).
MISSING_REFERENCE = frozenset({"does_not_exist", "unknown"})


def _only_missing_references(codes: Any) -> bool:
    pending, seen = [codes], False
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif item not in MISSING_REFERENCE:
            return False
        else:
            seen = True
    return seen


def _first_message(detail: Any) -> str:
    while isinstance(detail, dict | list) and detail:
        detail = next(iter(detail.values())) if isinstance(detail, dict) else detail[0]
    return str(detail)


# DRF's fields (and their subclasses) and the JSON types they take. A field that reads text on
# purpose (the thought tools' lenient numbers) says so with ``reads_text = True``.
_JSON_TYPES: dict[type, tuple[type, ...]] = {
    serializers.BooleanField: (bool,),
    serializers.IntegerField: (int, float),
    serializers.FloatField: (int, float),
    serializers.CharField: (str,),
}


def _json_type(field: Any) -> tuple[type, ...] | None:
    if getattr(field, "reads_text", False):
        return None
    return next((_JSON_TYPES[c] for c in type(field).__mro__ if c in _JSON_TYPES), None)


def _is_json_type(value: Any, expected: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return bool in expected  # a bool is an int to Python, not a number to JSON
    return isinstance(value, expected)


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
