"""The admin's delete confirmation page without private words.

Django lists everything a delete takes with it by each row's name. What the graph drew from a
private thought (entities, observations, edges, candidates: ``kg.models.private_source_deleted``)
goes with the thought, or with its owner, and those names are the thought's words: under such
a row the page says how many rows of each kind go, not which.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.contrib.admin import AdminSite
from django.contrib.admin.utils import get_deleted_objects
from django.http import HttpRequest


def deleted_without_names(
    objs: Iterable[Any], request: HttpRequest, site: AdminSite, *, hide: Callable[[Any], bool]
) -> list[Any]:
    """The confirmation page's nested list for ``objs``: as Django makes it, except that under
    each row for which ``hide`` is true only counts are given."""
    shown: list[Any] = []
    for obj in objs:
        one, counts, _, _ = get_deleted_objects([obj], request, site)
        if not hide(obj):
            shown.extend(one)
            continue
        shown.append(one[0])  # the row's own line (a private thought reads "(private thought)")
        own = str(type(obj)._meta.verbose_name_plural)
        drawn = [f"{n} {name}" for name, n in counts.items() if name != own]
        if drawn:
            shown.append([f"with it, not named here: {', '.join(drawn)}"])
    return shown
