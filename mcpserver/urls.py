from __future__ import annotations

from django.urls import path

from mcpserver.http import McpView

urlpatterns = [path("", McpView.as_view(), name="mcp")]
