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


def test_the_wsgi_application_loads_the_local_model_before_the_first_request():
    # The first think after a start took 9.7 s while the model loaded; now the process loads it
    # while it starts (before gunicorn or runserver hands it a request).
    out = settings_process(
        "import legacymind.wsgi; from legacymind.providers import embeddings as e; "
        "p = e.get_provider(); print(p.name, p._model is not None)",
        EMBEDDING_PROVIDER="local",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["local", "True"]
    assert "embedding model all-MiniLM-L6-v2 loaded in" in out.stderr


def test_the_wsgi_application_starts_when_the_model_cannot_load(tmp_path):
    # A model that cannot load must not stop the web process: healthz and the pages still
    # answer, and requests that embed give 503. A broken sentence-transformers install stands
    # in for it (a package of that name first on the path, failing at import).
    (tmp_path / "sentence_transformers.py").write_text("raise ImportError('broken install')\n")
    out = settings_process(
        "import legacymind.wsgi as w; print(callable(w.application))",
        EMBEDDING_PROVIDER="local",
        PYTHONPATH=str(tmp_path),
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
    assert "embedding model not loaded at start-up" in out.stderr
    assert "broken install" in out.stderr
