from __future__ import annotations

import pytest

from tests.support.settings_process import settings_process

pytestmark = pytest.mark.django_db


def test_healthz_reports_database_with_pgvector(anon_api):
    response = anon_api.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["checks"]["database"].startswith("ok (pgvector")


def test_api_requires_authentication_with_error_envelope(anon_api):
    response = anon_api.get("/api/v1/")
    assert response.status_code == 401
    assert response.json()["error_code"] == "not_authenticated"
    assert set(response.json()) == {"error_code", "detail", "fields"}


def test_the_wsgi_application_freezes_its_startup_objects():
    # A gunicorn worker loads the app once and keeps it: what exists by then is kept out of
    # the garbage collector's full collections (legacymind/wsgi.py).
    out = settings_process(
        "import gc, legacymind.wsgi as w; "
        "print(callable(w.application), gc.get_freeze_count() > 10_000, len(gc.get_objects()))"
    )
    assert out.returncode == 0, out.stderr
    is_app, frozen, tracked = out.stdout.split()
    assert (is_app, frozen) == ("True", "True")
    assert int(tracked) < 10_000
