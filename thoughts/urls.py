from __future__ import annotations

from django.urls import include, path

# Two route modules so the write path (think) and the read paths (list, detail, chain, search)
# evolve independently.
urlpatterns = [
    path("", include("thoughts.api.think_urls")),
    path("", include("thoughts.api.read_urls")),
]
