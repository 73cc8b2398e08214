"""The admin's list pages filter by URL only on what their own filters use.

Django's ``ModelAdmin.lookup_allowed`` checks a changelist URL's lookups across relations
against ``list_filter``, but lets any of the model's own fields through. On a model that holds
a private thought's words that is an oracle: ``?content__startswith=My secret`` lists the row on
a hit and nothing on a miss, so the words can be read a letter at a time without ever being
shown. An admin built on ``LimitedLookupsAdmin`` accepts a URL lookup only on its
``list_filter`` and ``date_hierarchy`` and on the metadata fields it names in ``url_filterable``
(ids, owners, sessions); any other lookup, like a relation Django refuses, is a 400. The list
is of what may be filtered, not of what may not: a text field added later is refused until
someone decides it may be.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin import SimpleListFilter
from django.core.exceptions import FieldDoesNotExist
from django.db.models import Model
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpRequest


def field_path(model: type[Model], lookup: str) -> str:
    """The fields a lookup goes through, without its transforms and comparison:
    ``owner_id``, ``owner__pk__in`` and ``owner`` are all ``owner``;
    ``verification__hypothesis__icontains`` is ``verification``."""
    names: list[str] = []
    opts = model._meta
    for part in lookup.split(LOOKUP_SEP):
        try:
            field: Any = opts.pk if part == "pk" else opts.get_field(part)
        except FieldDoesNotExist:
            break  # a transform or a comparison: the fields end here
        if names and field is opts.pk:
            break  # ``owner__id`` filters on the relation's own column
        names.append(field.name)
        if not field.is_relation:
            break
        opts = field.related_model._meta
    return LOOKUP_SEP.join(names)


class LimitedLookupsAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    # Metadata fields a URL may filter on besides list_filter and date_hierarchy.
    url_filterable: tuple[str, ...] = ()

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest) -> bool:
        allowed = {*self.url_filterable, *self._filter_names(request)}
        if self.date_hierarchy:
            allowed.add(self.date_hierarchy)
        # A SimpleListFilter's parameter is taken as it is: it need not name a field.
        if lookup not in allowed and field_path(self.model, lookup) not in allowed:
            return False
        return super().lookup_allowed(lookup, value, request)

    def _filter_names(self, request: HttpRequest) -> list[str]:
        names = []
        for item in self.get_list_filter(request):
            if isinstance(item, type) and issubclass(item, SimpleListFilter):
                names.append(str(item.parameter_name))
            elif isinstance(item, list | tuple):
                names.append(str(item[0]))
            else:
                names.append(str(item))
        return names
