"""The schema is valid OpenAPI 3.1 where a strict validator looks: JSON Schema 2020-12 keywords
only, real answers validate against it, and the shared 406 and 413 answers are documented."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from tests.thoughts.factories_read import ThoughtFactory

pytestmark = pytest.mark.django_db
METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture
def schema(anon_api) -> dict[str, Any]:
    response = anon_api.get("/api/schema/")
    assert response.status_code == 200
    return yaml.safe_load(response.content)


def validator(schema: dict[str, Any], node: dict[str, Any]) -> Draft202012Validator:
    # The components travel along so that the node's $refs resolve; formats are not asserted,
    # JSON Schema 2020-12's default and that of most OpenAPI 3.1 validators.
    return Draft202012Validator({**node, "components": schema["components"]})


def keywords(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set(node) | {k for value in node.values() for k in keywords(value)}
    if isinstance(node, list):
        return {k for value in node for k in keywords(value)}
    return set()


def test_the_schema_uses_no_openapi_3_0_nullable(schema):
    assert "nullable" not in keywords(schema["components"]) | keywords(schema["paths"])


def test_a_last_page_with_null_links_validates_against_its_schema(api, user, schema):
    ThoughtFactory(owner=user)
    page = api.get("/api/v1/thoughts/").json()
    assert page["next"] is None and page["previous"] is None
    ref = {"$ref": "#/components/schemas/PaginatedThoughtOutList"}
    assert list(validator(schema, ref).iter_errors(page)) == []
    linked = api.get("/api/v1/thoughts/", {"limit": 1, "offset": 0}).json()
    assert list(validator(schema, ref).iter_errors({**linked, "next": "http://x/?offset=1"})) == []


@pytest.mark.parametrize("value", ["2026-11-24", "2026-11-24T00:00:00Z"])
def test_date_bounds_accept_a_date_and_a_date_time_without_format_assertion(schema, value):
    params = schema["paths"]["/api/v1/thoughts/"]["get"]["parameters"]
    for name in ("date_from", "date_to"):
        param = next(p for p in params if p["name"] == name)
        # oneOf [date, date-time] matched both branches for any string, so refused every value.
        assert list(validator(schema, param["schema"]).iter_errors(value)) == [], name


def test_every_operation_documents_406_and_every_body_413_in_the_envelope(schema):
    envelope = "#/components/schemas/ErrorOut"
    for path, item in schema["paths"].items():
        for method in METHODS:
            if method not in item:
                continue
            responses = item[method]["responses"]
            expected = {"406", "413"} if "requestBody" in item[method] else {"406"}
            for status in expected:
                assert status in responses, f"{method.upper()} {path} lacks {status}"
                ref = responses[status]["content"]["application/json"]["schema"]["$ref"]
                assert ref == envelope, (method, path, status)
