from __future__ import annotations

from django.urls import path

from agent import pages, views

urlpatterns = [
    path("reflections", views.ReflectionView.as_view(), name="reflections"),
    path("v2/reflections", views.V2ReflectionView.as_view(), name="v2-reflections"),
    path("excavations", views.ExcavationView.as_view(), name="excavations"),
    path("v3/agent/act", views.AgentActView.as_view(), name="agent-act"),
    path("metrics", views.metrics_view, name="metrics"),
    path("journal/", pages.journal, name="journal"),
    path("journal/act", pages.journal_act, name="journal-act"),
]
