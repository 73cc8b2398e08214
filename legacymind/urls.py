from __future__ import annotations

from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from legacymind import errors
from legacymind.api.root import ApiRootView
from legacymind.web import health

handler400 = "legacymind.errors.handler400"
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
    # The MCP server over Streamable HTTP (docs/mcp.md).
    path("mcp", include("mcpserver.urls")),
    # The journaling agent keeps the original service's paths (specs/README.md).
    path("", include("agent.urls")),
    path("", include("thoughts.pages")),
    path("", include("kg.pages")),
    path("", include("innervoice.pages")),
    path("", include("innervoice.home")),
    path("", include("legacymind.web.pages")),
    # Last: any other path under the API's prefixes (/api/, the agent's /v2/ and /v3/) is the
    # 404 envelope, in DEBUG too.
    re_path(r"^(?:api|v2|v3)(?:/.*)?$", errors.not_found),
]
