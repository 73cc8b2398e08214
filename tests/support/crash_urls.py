"""A URLconf for testing the 500 handlers: the project's URLs plus views that crash."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import path

from legacymind.urls import handler404, handler500
from legacymind.urls import urlpatterns as project_urls

__all__ = ["handler404", "handler500", "urlpatterns"]


def crash(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a bug the handlers must not show: secret-detail")


urlpatterns = [
    path("api/v1/crash", crash),
    path("v3/crash", crash),
    path("pages/crash", crash),
    *project_urls,
]
