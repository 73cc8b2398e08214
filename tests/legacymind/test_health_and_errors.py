"""``/healthz`` and the error envelope, through real endpoints of the KG and agent APIs."""

from __future__ import annotations

import logging
import socket

import pytest

from kg.models import Entity
from legacymind.providers import embeddings

pytestmark = pytest.mark.django_db
ENVELOPE = {"error_code", "detail", "fields"}


def assert_envelope(response, status: int, code: str, extra: frozenset[str] = frozenset()) -> dict:
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == ENVELOPE | extra, body
    assert body["error_code"] == code
    assert isinstance(body["detail"], str) and body["detail"]
    assert "Traceback" not in response.content.decode()
    return body


def dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again: nothing listens there


# --- /healthz --------------------------------------------------------------------------------
def test_healthz_is_public_and_reports_database_and_pgvector(anon_api):
    response = anon_api.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["checks"]["database"].startswith("ok (pgvector 0.")
    assert body["checks"]["redis"] == "not configured"


@pytest.mark.django_db(transaction=True)  # the failed check must not abort a test transaction
def test_healthz_checks_the_database_cache_and_says_when_its_table_is_missing(anon_api, caplog):
    from django.db import connection

    assert anon_api.get("/healthz").json()["checks"]["cache"] == "ok"
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE legacymind_cache RENAME TO legacymind_cache_gone")
        try:
            caplog.set_level(logging.WARNING)
            response = anon_api.get("/healthz")
        finally:
            cursor.execute("ALTER TABLE legacymind_cache_gone RENAME TO legacymind_cache")
    assert response.status_code == 503
    assert response.json()["checks"]["cache"].startswith("error: ")
    lines = [(r.levelname, r.name, r.getMessage()) for r in caplog.records]
    assert lines == [
        ("WARNING", "legacymind.web.health", "healthz unavailable: cache error: ProgrammingError")
    ], lines  # one line with the reason, not Django's ERROR "Service Unavailable"


def test_healthz_reports_the_installed_pgvector_version(anon_api):
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        installed = cursor.fetchone()[0]
    # The embedded server ships pgvector 0.8.x, as does docker-compose's pgvector/pgvector:pg16.
    assert anon_api.get("/healthz").json()["checks"]["database"] == f"ok (pgvector {installed})"


def test_healthz_is_503_naming_redis_when_redis_is_down(anon_api, settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{dead_port()}/0"
    response = anon_api.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["redis"].startswith("error: ")
    assert body["checks"]["database"].startswith("ok")


def test_healthz_names_a_vector_index_that_is_out_without_failing(anon_api):
    from django.db import connection

    from kg.models import Entity
    from legacymind.vectors.indexes import vector_index

    assert anon_api.get("/healthz").json()["checks"]["vector_indexes"] == "ok"
    with connection.schema_editor() as editor:  # rolled back with the test's transaction
        editor.remove_index(Entity, vector_index(Entity, 384))

    response = anon_api.get("/healthz")

    assert response.status_code == 200
    assert response.json()["status"] == "ok"
    assert response.json()["checks"]["vector_indexes"] == (
        "out: kg_entity_emb_384 (searches scan those tables; manage.py reembed builds them)"
    )


def test_healthz_rejects_other_methods(anon_api):
    assert anon_api.post("/healthz").status_code == 405


# --- the envelope, status by status ------------------------------------------------------------
def test_400_names_the_bad_field_and_writes_nothing(mod_api):
    before = Entity.objects.count()
    response = mod_api.post(
        "/api/v1/kg/entities/", {"entity_type": "service", "aliases": "x"}, format="json"
    )
    body = assert_envelope(response, 400, "invalid")
    assert "name" in body["fields"]
    assert Entity.objects.count() == before


def test_400_for_a_malformed_json_body(mod_api):
    response = mod_api.generic(
        "POST", "/api/v1/kg/entities/", "{not json", content_type="application/json"
    )
    assert_envelope(response, 400, "parse_error")


def test_401_without_credentials(anon_api):
    assert_envelope(anon_api.get("/api/v1/kg/entities/"), 401, "not_authenticated")


def test_401_with_a_wrong_token(anon_api):
    anon_api.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert_envelope(anon_api.get("/api/v1/kg/entities/"), 401, "authentication_failed")


def test_403_when_a_non_moderator_opens_the_queue(api):
    assert_envelope(api.get("/api/v1/kg/candidates/"), 403, "permission_denied")


def test_403_when_a_non_moderator_writes_the_graph_and_nothing_is_written(api):
    response = api.post("/api/v1/kg/entities/", {"name": "nope"}, format="json")
    assert_envelope(response, 403, "permission_denied")
    assert not Entity.objects.filter(name="nope").exists()


def test_404_for_a_missing_row(api):
    assert_envelope(api.get("/api/v1/kg/entities/987654321/"), 404, "not_found")


def test_405_for_a_method_the_endpoint_does_not_have(mod_api):
    body = assert_envelope(mod_api.get("/api/v1/kg/candidates/decide"), 405, "method_not_allowed")
    assert "GET" in body["detail"]


def test_429_when_the_agent_rate_is_exceeded(api, settings):
    settings.AGENT_RATE_PER_MINUTE = 1
    entry = {"journal_entry": {"text": "I keep saying yes to meetings I do not want."}}
    statuses = []
    # Three calls: at most one minute boundary falls between them.
    for _ in range(3):
        response = api.post("/reflections", entry, format="json")
        statuses.append(response.status_code)
        if response.status_code == 429:
            break
    assert statuses[0] == 200
    # The agent's errors carry what the client acts on beside the envelope (agent.errors).
    body = assert_envelope(response, 429, "rate_limited", extra=frozenset({"retry_after"}))
    assert body["retry_after"] >= 1
    assert response["Retry-After"] == str(body["retry_after"])


def test_503_when_the_embedding_provider_fails(api, settings, openai_stub, caplog):
    settings.EMBEDDING_PROVIDER = "openai"
    settings.OPENAI_API_KEY = "sk-test"
    settings.OPENAI_BASE_URL = openai_stub.base_url
    settings.EMBEDDING_MAX_RETRIES = 0
    embeddings._cached.cache_clear()
    openai_stub.fail_next(500)
    response = api.get("/api/v1/kg/search/", {"q": "session store"})
    body = assert_envelope(response, 503, "embedding_unavailable")
    # Users are told what happened, not where the provider lives; the operator's log says it.
    assert body["detail"].startswith("The embedding provider did not answer")
    assert openai_stub.base_url not in response.content.decode()
    logged = [r.getMessage() for r in caplog.records if r.name == "legacymind.errors"]
    assert any("HTTP 500" in m and openai_stub.base_url in m for m in logged), logged
    assert len(openai_stub.requests) == 1


def test_api_404_is_json_not_an_html_page(api):
    for path in ("/api/nothing-here", "/api/v1/kg/nothing-here/", "/api/v9/"):
        body = assert_envelope(api.get(path), 404, "not_found")
        assert body["detail"] == "Not found."


def test_404_outside_the_api_stays_a_page(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert not response["Content-Type"].startswith("application/json")


@pytest.mark.urls("tests.support.crash_urls")
@pytest.mark.parametrize(
    "path, headers",
    [
        ("/api/v1/crash", {}),
        # The agent's JSON endpoints live outside /api/ (the original service's paths).
        ("/v3/crash", {"CONTENT_TYPE": "application/json"}),
        ("/v3/crash", {"HTTP_ACCEPT": "application/json"}),
    ],
)
def test_an_unhandled_error_is_a_500_envelope_without_its_details(settings, path, headers, caplog):
    from django.test import Client

    settings.DEBUG = False
    response = Client(raise_request_exception=False).generic("POST", path, "{}", **headers)
    body = assert_envelope(response, 500, "error")
    assert body["detail"] == "Internal server error."
    assert "secret-detail" not in response.content.decode()
    assert any("unhandled error on " + path in r.getMessage() for r in caplog.records)


@pytest.mark.urls("tests.support.crash_urls")
def test_an_unhandled_error_on_a_page_is_the_html_500_page(settings):
    from django.test import Client

    settings.DEBUG = False
    response = Client(raise_request_exception=False).get("/pages/crash")
    assert response.status_code == 500
    assert response["Content-Type"].startswith("text/html")
    assert "secret-detail" not in response.content.decode()


@pytest.mark.parametrize(
    "url",
    [
        "/admin/kg/entity/?entity_type=%00",  # an admin list filter: was a 500
        "/admin/kg/entity/?q=a%00b",
        "/admin/thoughts/thought/?%00=1",
    ],
)
def test_a_nul_character_in_the_query_is_a_400_in_the_admin(admin_client, url):
    response = admin_client.get(url)
    assert response.status_code == 400
    assert "Null characters are not allowed." in response.content.decode()


def test_a_nul_character_in_the_query_is_a_400_envelope_naming_the_parameter(api):
    response = api.get("/api/v1/thoughts/?session_id=s%00&chain_id=ok&tags=a%00")
    body = assert_envelope(response, 400, "invalid")
    assert sorted(body["fields"]) == ["session_id", "tags"]


def test_queries_without_nul_pass_through(api):
    # %2500 is a literal "%00" text, not a NUL character.
    response = api.get("/api/v1/thoughts/?session_id=%2500")
    assert response.status_code == 200
    assert response.json()["results"] == []
