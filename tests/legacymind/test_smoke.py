from __future__ import annotations

import pytest

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
