from __future__ import annotations

from django.urls import URLPattern, URLResolver, path
from rest_framework.routers import SimpleRouter

from thoughts.api.read import SearchView, ThoughtViewSet

router = SimpleRouter()
# Names: thought-list, thought-detail, thought-chain.
router.register("thoughts", ThoughtViewSet, basename="thought")

urlpatterns: list[URLPattern | URLResolver] = [
    path("search", SearchView.as_view(), name="search"),
    *router.urls,
]
