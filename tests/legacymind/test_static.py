"""Static files are served by the app itself with DEBUG off (gunicorn in docker-compose)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client, override_settings


@pytest.mark.django_db
def test_collected_static_files_are_served_without_debug(tmp_path: Path) -> None:
    with override_settings(STATIC_ROOT=tmp_path, DEBUG=False):
        call_command("collectstatic", interactive=False, verbosity=0)
        client = Client()  # a new handler: WhiteNoise indexes STATIC_ROOT when it is built
        css = client.get("/static/admin/css/base.css")
        swagger = client.get("/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
        missing = client.get("/static/admin/css/no-such-file.css")
    assert css.status_code == 200 and b"body" in b"".join(css.streaming_content)
    assert swagger.status_code == 200
    assert missing.status_code == 404
