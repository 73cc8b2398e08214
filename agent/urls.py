from __future__ import annotations

from django.urls import path

from agent import pages
from agent.api import views as api

urlpatterns = [
    path("reflections", api.ReflectionView.as_view(), name="reflections"),
    path("v2/reflections", api.V2ReflectionView.as_view(), name="v2-reflections"),
    path("excavations", api.ExcavationView.as_view(), name="excavations"),
    path("v3/agent/act", api.AgentActView.as_view(), name="agent-act"),
    path("metrics", api.metrics_view, name="metrics"),
    path("journal/", pages.journal, name="journal"),
    path("journal/act", pages.journal_act, name="journal-act"),
    path("journal/reflect", pages.journal_reflect, name="journal-reflect"),
]
