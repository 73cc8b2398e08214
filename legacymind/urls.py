from __future__ import annotations

from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from legacymind import health
from legacymind.api import ApiRootView

handler404 = "legacymind.errors.handler404"
handler500 = "legacymind.errors.handler500"

api_v1: list[URLPattern | URLResolver] = [
    path("", ApiRootView.as_view(), name="api-root"),
    path("", include("thoughts.urls")),
    path("kg/", include("kg.urls")),
    path("", include("innervoice.urls")),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", health.healthz, name="healthz"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("api/v1/", include(api_v1)),
    # The journaling agent keeps the original service's paths (specs/README.md).
    path("", include("agent.urls")),
    path("", include("legacymind.pages")),
]
