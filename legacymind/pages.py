"""Browser pages (server-rendered). The journaling pages are added by the agent app."""

from __future__ import annotations

from django.shortcuts import render
from django.urls import path


def home(request):  # type: ignore[no-untyped-def]
    return render(request, "home.html")


urlpatterns = [path("", home, name="home")]
