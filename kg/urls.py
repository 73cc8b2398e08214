from __future__ import annotations

from django.urls import path
from rest_framework.routers import SimpleRouter

from kg.api.graph import EdgeViewSet, EntityViewSet, ObservationViewSet
from kg.api.moderation import CandidateListView, DecideView, ExtractView
from kg.api.search import SearchView

router = SimpleRouter()
router.register("entities", EntityViewSet, basename="kg-entity")
router.register("observations", ObservationViewSet, basename="kg-observation")
router.register("edges", EdgeViewSet, basename="kg-edge")

urlpatterns = [
    path("extract", ExtractView.as_view(), name="kg-extract"),
    path("search/", SearchView.as_view(), name="kg-search"),
    path("candidates/", CandidateListView.as_view(), name="kg-candidate-list"),
    path("candidates/decide", DecideView.as_view(), name="kg-candidate-decide"),
    *router.urls,
]
