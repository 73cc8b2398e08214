from __future__ import annotations

from django.urls import path

from thoughts.api.think import ThinkView

urlpatterns = [
    path("think", ThinkView.as_view(), name="think"),
]
