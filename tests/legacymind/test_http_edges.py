"""HTTP edges that escaped the error envelope: bodies nested too deep or too large, unknown
paths in DEBUG, requests Django refuses before any view, and the browsable API's HTML pages."""

from __future__ import annotations

import pytest
from django.test import Client

from kg.models import Entity
from legacymind.api.parsers import MAX_JSON_DEPTH
from tests.thoughts.factories_read import ThoughtFactory
from thoughts.models import Thought

pytestmark = pytest.mark.django_db
ENVELOPE = {"error_code", "detail", "fields"}


def envelope_of(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    body = response.json()
    assert set(body) == ENVELOPE, body
    assert body["error_code"] == code
    assert "Traceback" not in response.content.decode()
    return body


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# --- bodies nested too deeply --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "body"),
    [
        # Past Python's recursion limit: the decoder raised RecursionError, a 500.
        ("/api/v1/think", '{"content": "hi", "x": ' + nested(3000) + "}"),
        ("/api/v1/search", '{"query": "hi", "x": ' + nested(3000) + "}"),
        ("/api/v1/kg/entities/", '{"name": "n", "x": ' + nested(3000) + "}"),
        # The journaling agent's views name their parser: the project's, too.
        ("/reflections", '{"journal_entry": {"text": "hi"}, "x": ' + nested(3000) + "}"),
        ("/excavations", '{"mode": "init", "x": ' + nested(3000) + "}"),
        ("/v2/reflections", '{"x": ' + nested(3000) + "}"),
        ("/v3/agent/act", '{"mode": "init", "x": ' + nested(3000) + "}"),
        # Parsed, but json.dumps then failed writing it to the jsonb column, a 500.
        ("/api/v1/kg/entities/", '{"name": "n", "data": {"a": ' + nested(900) + "}}"),
    ],
)
def test_a_body_nested_too_deeply_is_a_400_parse_error_and_stores_nothing(mod_api, path, body):
    mod_api.raise_request_exception = False
    response = mod_api.post(path, body, content_type="application/json")
    detail = envelope_of(response, 400, "parse_error")["detail"]
    assert f"more than {MAX_JSON_DEPTH} levels" in detail
    assert not Thought.objects.exists() and not Entity.objects.exists()


def test_nesting_up_to_the_limit_is_accepted(mod_api):
    # {"name", "data": {"a": [[…]]}}: the body, data and 98 lists are 100 levels.
    inner = MAX_JSON_DEPTH - 2
    ok = '{"name": "deep", "data": {"a": ' + nested(inner) + "}}"
    assert (
        mod_api.post("/api/v1/kg/entities/", ok, content_type="application/json").status_code == 201
    )
    too_deep = '{"name": "deeper", "data": {"a": ' + nested(inner + 1) + "}}"
    response = mod_api.post("/api/v1/kg/entities/", too_deep, content_type="application/json")
    envelope_of(response, 400, "parse_error")
    assert list(Entity.objects.values_list("name", flat=True)) == ["deep"]


def test_a_body_that_is_not_an_object_passes_the_parser_to_validation(api):
    response = api.post("/api/v1/think", '"just a string"', content_type="application/json")
    envelope_of(response, 400, "invalid")  # a body that is not an object: the serializer's 400


# --- bodies over DATA_UPLOAD_MAX_MEMORY_SIZE ----------------------------------------------------
@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("path", ["/api/v1/think", "/api/v1/kg/entities/", "/reflections"])
def test_a_body_over_the_upload_limit_is_a_413_envelope(mod_api, settings, path, debug):
    settings.DEBUG = debug  # in DEBUG Django's answer was its technical HTML page
    big = '{"content": "' + "a" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1) + '"}'
    response = mod_api.post(path, big, content_type="application/json")
    body = envelope_of(response, 413, "too_large")
    assert str(settings.DATA_UPLOAD_MAX_MEMORY_SIZE) in body["detail"]
    assert not Thought.objects.exists() and not Entity.objects.exists()


def test_a_request_django_refuses_before_any_view_is_an_envelope_on_the_api_only():
    # A Host not in ALLOWED_HOSTS: Django's SuspiciousOperation, answered by handler400.
    client = Client(raise_request_exception=False)
    api = client.get("/api/v1/thoughts/", HTTP_HOST="evil.example")
    envelope_of(api, 400, "bad_request")
    agent = client.post("/v3/agent/act", "{}", "application/json", HTTP_HOST="evil.example")
    envelope_of(agent, 400, "bad_request")
    page = client.get("/journal/", HTTP_HOST="evil.example")
    assert page.status_code == 400
    assert page["Content-Type"].startswith("text/html")


# --- unknown paths ------------------------------------------------------------------------------
@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize(
    "path", ["/api/v1/nonexistent", "/api/v1/kg/nothing/", "/api", "/v3/nothing", "/v2/x/y"]
)
def test_an_unknown_api_path_is_the_404_envelope_in_debug_too(api, settings, path, debug):
    settings.DEBUG = debug  # DEBUG (make run's default) answered Django's technical HTML 404
    body = envelope_of(api.get(path), 404, "not_found")
    assert body["detail"] == "Not found."


def test_pages_keep_the_html_404_in_debug(client, settings):
    settings.DEBUG = True
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_a_get_without_the_trailing_slash_is_still_redirected(api):
    response = api.get("/api/v1/thoughts?limit=5")
    assert response.status_code == 301
    assert response["Location"] == "/api/v1/thoughts/?limit=5"


def test_a_post_without_the_trailing_slash_is_a_404_naming_the_path(mod_api, settings):
    settings.DEBUG = True  # Django's own redirect raised RuntimeError here: a 500
    response = mod_api.post("/api/v1/kg/entities", {"name": "n"}, format="json")
    body = envelope_of(response, 404, "not_found")
    assert "/api/v1/kg/entities/" in body["detail"]
    assert not Entity.objects.exists()


def test_an_unknown_path_answers_404_not_a_csrf_page_to_a_token_client(user):
    from rest_framework.authtoken.models import Token

    token, _ = Token.objects.get_or_create(user=user)
    client = Client(enforce_csrf_checks=True)
    response = client.post(
        "/api/v1/nothing", "{}", "application/json", HTTP_AUTHORIZATION=f"Token {token.key}"
    )
    envelope_of(response, 404, "not_found")


# --- content negotiation and the browsable API ---------------------------------------------------
def test_an_unacceptable_accept_header_is_a_406_envelope(api):
    envelope_of(api.get("/api/v1/thoughts/", HTTP_ACCEPT="application/xml"), 406, "not_acceptable")


def test_the_browsable_api_renders_thought_pages_for_a_signed_in_browser(client, user):
    thought = ThoughtFactory(owner=user, content="a thought shown as html")
    client.force_login(user)
    for path in (
        "/api/v1/",
        "/api/v1/thoughts/",  # was a 500: the view has no queryset for DRF's filter form
        f"/api/v1/thoughts/{thought.pk}/",
        f"/api/v1/thoughts/{thought.pk}/chain/",
    ):
        response = client.get(path, HTTP_ACCEPT="text/html")
        assert response.status_code == 200, (path, response.status_code)
        assert response["Content-Type"].startswith("text/html"), path
        if "thoughts/" in path:
            assert "a thought shown as html" in response.content.decode(), path


def test_the_browsable_api_renders_the_moderation_queue(client, moderator):
    client.force_login(moderator)
    response = client.get("/api/v1/kg/candidates/", HTTP_ACCEPT="text/html")
    assert response.status_code == 200  # was a 500, like the thought list
    assert response["Content-Type"].startswith("text/html")
