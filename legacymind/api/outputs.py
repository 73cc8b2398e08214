"""Output serializers that render without DRF's per-field machinery.

An output serializer is the schema's source and the one renderer of a result (docs/
architecture.md, "One way in, one way out"). DRF's ``Serializer.to_representation`` pays, for
every field of every item, a generator over the bound fields, a ``get_attribute`` that tries
mappings, callables and ``SkipField``, and an ``isinstance`` check for primary-key-only objects;
on think's answer (a few nested objects and a list of about twenty memories) that was most of
the request's Python time after the query. ``Output`` reads the same fields once into a plan
(name, how to read the value, how to render it) and follows it for every instance.

What it renders is what DRF would render for plain objects and dicts (tested side by side in
tests/legacymind/test_outputs.py). It is for outputs only: no validation, no ``source`` that names a
method to call (DRF calls it; this reads it), and no per-request context, so one bound instance
can render every result.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any

from rest_framework import serializers
from rest_framework.fields import Field, SkipField

_Reader = Callable[[Any], Any]
_Plan = list[tuple[str, _Reader, Callable[[Any], Any], Field]]  # type: ignore[type-arg]


def _reader(field: Field) -> _Reader:  # type: ignore[type-arg]
    if type(field).get_attribute is not Field.get_attribute:
        return field.get_attribute  # a field that reads its value its own way
    path = tuple(field.source_attrs)
    if not path:  # source="*": the instance itself
        return lambda instance: instance
    if len(path) == 1:
        (key,) = path
        plain = attrgetter(key)
        return lambda instance: instance[key] if isinstance(instance, dict) else plain(instance)

    def read(instance: Any) -> Any:
        # Dicts by key, anything else by attribute, as DRF reads a dotted source. A missing
        # key or attribute (a None on the way included) falls back to DRF's own rules.
        for part in path:
            instance = instance[part] if isinstance(instance, dict) else getattr(instance, part)
        return instance

    return read


class Output(serializers.Serializer[Any]):
    # (A comment, not a docstring: a docstring would become every subclass's schema description.)

    def _plan(self) -> _Plan:
        plan: _Plan | None = self.__dict__.get("_render_plan")
        if plan is None:
            plan = [
                (name, _reader(field), field.to_representation, field)
                for name, field in self.fields.items()
                if not field.write_only
            ]
            self.__dict__["_render_plan"] = plan
        return plan

    def to_representation(self, instance: Any) -> dict[str, Any]:
        body: dict[str, Any] = {}
        for name, read, render, field in self._plan():
            try:
                value = read(instance)
            except (KeyError, AttributeError):
                try:  # missing: DRF's rules (the default, null, or the field left out)
                    value = field.get_attribute(instance)
                except SkipField:
                    continue
            body[name] = None if value is None else render(value)
        return body
