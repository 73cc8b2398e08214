"""The home page (``/``): what LegacyMind is, the way in, and for a signed-in user a summary of
their own material: recent thoughts, the open inner-voice thread, the knowledge graph's size
and, for moderators, the candidates waiting.

It lives here because the inner voice is the top layer, the one app that may read all the
others (``legacymind`` imports no feature app); each figure comes from its app's selectors."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path

from innervoice import selectors
from kg.api.permissions import MODERATE
from kg.models import Edge, Entity
from kg.selectors import candidate_querysets, memories_visible_to, observation_candidates
from thoughts.selectors import ThoughtFilters, thoughts_list

RECENT = 5


def home(request: HttpRequest) -> HttpResponse:
    context: dict[str, Any] = {}
    if request.user.is_authenticated:
        context = _summary(request.user)  # type: ignore[arg-type]
    return render(request, "home.html", context)


def _summary(user: User) -> dict[str, Any]:
    open_thread = selectors.thread_open_latest(user=user)
    if open_thread is not None:  # the page says how many exchanges it holds
        open_thread.exchange_count = open_thread.exchanges.count()  # type: ignore[attr-defined]
    context: dict[str, Any] = {
        "recent": list(thoughts_list(user=user, filters=ThoughtFilters())[:RECENT]),
        "open_thread": open_thread,
        "kg_entities": memories_visible_to(user, Entity).count(),
        "kg_edges": memories_visible_to(user, Edge).count(),
    }
    if user.has_perm(MODERATE):
        entities, edges = candidate_querysets(status="pending")
        observations = observation_candidates(status="pending")
        context["pending"] = entities.count() + edges.count() + observations.count()
    return context


urlpatterns = [path("", home, name="home")]
