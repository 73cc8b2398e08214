"""The OpenAPI 3.1 schema, the offline Swagger UI, and which endpoints need credentials."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml
from django.contrib.staticfiles import finders

pytestmark = pytest.mark.django_db
METHODS = ("get", "post", "put", "patch", "delete")
# The journaling agent keeps the original service's paths (specs/README.md) and documents its
# own error bodies (spec 004); the 401 of a missing login is the project's envelope there too.
AGENT_PATHS = {"/reflections", "/v2/reflections", "/excavations", "/v3/agent/act"}


@pytest.fixture
def schema(anon_api) -> dict[str, Any]:
    response = anon_api.get("/api/schema/")
    assert response.status_code == 200
    return yaml.safe_load(response.content)


def refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [r for value in node.values() for r in refs(value)]
    if isinstance(node, list):
        return [r for value in node for r in refs(value)]
    return []


def resolve(schema: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), ref
    node: Any = schema
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def test_schema_is_openapi_3_1_with_every_reference_resolving(schema):
    assert schema["openapi"] == "3.1.0"
    assert schema["info"]["title"] == "LegacyMind API" and schema["info"]["version"]
    assert schema["paths"], "no paths"
    operation_ids = []
    for path, item in schema["paths"].items():
        assert path.startswith("/"), path
        for method, op in item.items():
            if method not in METHODS:
                continue
            assert op.get("responses"), f"{method.upper()} {path} has no responses"
            operation_ids.append(op["operationId"])
            # Every {param} in the path is declared as a path parameter.
            declared = {p["name"] for p in op.get("parameters", []) if p.get("in") == "path"}
            assert set(re.findall(r"{(\w+)}", path)) <= declared, path
    assert len(operation_ids) == len(set(operation_ids)), "duplicate operationId"
    for ref in refs(schema):
        assert isinstance(resolve(schema, ref), dict), ref
    schemes = schema["components"]["securitySchemes"]
    assert (
        schemes["tokenAuth"]["in"] == "header" and schemes["tokenAuth"]["name"] == "Authorization"
    )


def test_schema_is_also_served_as_json(anon_api):
    response = anon_api.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    assert json.loads(response.content)["openapi"] == "3.1.0"


def test_schema_covers_the_main_apis(schema):
    paths = set(schema["paths"])
    for expected in ("/api/v1/kg/entities/", "/api/v1/kg/candidates/", "/v3/agent/act"):
        assert expected in paths


def test_swagger_ui_is_served_offline_from_the_sidecar(anon_api):
    response = anon_api.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "/api/schema/" in html
    assets = re.findall(r"""(?:src|href)=["']([^"']+)["']""", html)
    sidecar = [a for a in assets if "drf_spectacular_sidecar/swagger-ui-dist/" in a]
    assert any(a.endswith("swagger-ui-bundle.js") for a in sidecar), assets
    assert any(a.endswith("swagger-ui.css") for a in sidecar), assets
    # No CDN: every asset is a local static file that exists in this install.
    assert not re.search(r"(cdn\.jsdelivr|unpkg\.com|cdnjs|https?://)", " ".join(assets)), assets
    for asset in sidecar:
        relative = asset.split("/static/", 1)[1].split("?")[0]
        assert finders.find(relative), f"{relative} is not a local static file"


def anonymous_calls(schema: dict[str, Any]) -> list[tuple[str, str, str]]:
    calls = []
    for path, item in schema["paths"].items():
        concrete = re.sub(r"{[^}]+}", "1", path)
        for method in METHODS:
            if method in item:
                calls.append((path, method, concrete))
    return calls


def test_every_documented_operation_requires_credentials(anon_api, schema):
    calls = [c for c in anonymous_calls(schema) if c[0] != "/api/schema/"]
    assert len(calls) >= 10
    assert {path for path, _, _ in calls} >= AGENT_PATHS
    for path, method, concrete in calls:
        op = schema["paths"][path][method]
        assert {} not in op.get("security", []), f"{method.upper()} {path} documented as public"
        response = getattr(anon_api, method)(concrete, {}, format="json")
        assert response.status_code == 401, f"{method.upper()} {path}: {response.status_code}"
        assert response.json()["error_code"] == "not_authenticated"


def test_only_healthz_schema_and_docs_are_public(anon_api, schema):
    public = {
        path
        for path, item in schema["paths"].items()
        for method in METHODS
        if method in item and {} in item[method].get("security", [{}])
    }
    # The journaling agent's paths included: every documented operation needs a login.
    assert public == set()
    for path in ("/healthz", "/api/schema/", "/api/docs/"):
        assert anon_api.get(path).status_code == 200, path


def error_schema(schema: dict[str, Any], op: dict[str, Any], status: str) -> dict[str, Any]:
    content = op["responses"][status]["content"]["application/json"]["schema"]
    return resolve(schema, content["$ref"])


def test_every_operation_documents_the_error_envelope_for_its_shared_statuses(schema):
    envelope_fields = {"error_code", "detail", "fields"}
    for path, item in schema["paths"].items():
        for method, op in item.items():
            if method not in METHODS or path in ("/api/schema/",):
                continue
            name = f"{method.upper()} {path}"
            documented = set(op["responses"])
            expected = set()
            if {} not in op.get("security", []):
                expected.add("401")
            if "{" in path:
                expected.add("404")
            if (
                "requestBody" in op
                or method != "get"
                or any(p["in"] == "query" for p in op.get("parameters", []))
            ):
                expected.add("400")
            if method != "get":
                expected.add("403")  # a session request without its CSRF token, at least
            assert expected <= documented, f"{name}: {sorted(expected - documented)} missing"
            for status in sorted(expected):
                if path in AGENT_PATHS and status != "401":
                    continue  # the agent documents its own error bodies (spec 004)
                body = error_schema(schema, op, status)
                assert set(body["properties"]) == envelope_fields, f"{name} {status}"


def test_declared_errors_are_kept_and_throttled_views_document_429(schema):
    search = schema["paths"]["/api/v1/search"]["post"]["responses"]
    assert "could not be embedded" in search["503"]["description"]  # the view's own
    act = schema["paths"]["/v3/agent/act"]["post"]["responses"]
    assert "429" in act  # rate and budget limits


def test_pagination_parameters_are_bounded_in_the_schema(schema):
    params = {p["name"]: p for p in schema["paths"]["/api/v1/kg/entities/"]["get"]["parameters"]}
    assert params["limit"]["schema"]["minimum"] == 1
    assert params["offset"]["schema"] == {
        "type": "integer",
        "minimum": 0,
        "maximum": 1_000_000_000,
        "default": 0,
    }
    assert {"q", "entity_type"} <= set(params)


def test_no_schema_is_ambiguous_about_null(schema):
    # oneOf [{}, {type: null}] (a nullable JSONField) rejects null, which matches both branches.
    def walk(node: Any, path: str) -> list[str]:
        found = []
        if isinstance(node, dict):
            if {} in node.get("oneOf", []):
                found.append(path)
            for key, value in node.items():
                found += walk(value, f"{path}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                found += walk(value, f"{path}/{i}")
        return found

    assert walk(schema, "") == []


def test_kg_writes_document_the_natural_key_conflict(schema):
    for path, method in [
        ("/api/v1/kg/entities/", "post"),
        ("/api/v1/kg/entities/{id}/", "patch"),
        ("/api/v1/kg/observations/{id}/", "put"),
        ("/api/v1/kg/edges/", "post"),
    ]:
        assert "409" in schema["paths"][path][method]["responses"], (method, path)
