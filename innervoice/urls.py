from __future__ import annotations

from django.urls import URLPattern, URLResolver, path
from rest_framework.routers import SimpleRouter

from innervoice.api import InnerVoiceView, ThreadViewSet

router = SimpleRouter()
# Names: inner-voice-thread-list, inner-voice-thread-detail, inner-voice-thread-close.
router.register("inner-voice/threads", ThreadViewSet, basename="inner-voice-thread")

urlpatterns: list[URLPattern | URLResolver] = [
    path("inner-voice", InnerVoiceView.as_view(), name="inner-voice"),
    *router.urls,
]
