"""POST /api/v1/think answers exactly what the OpenAPI schema documents: every field of a full
answer (injection, verification, frameworks, links, hints, timings) is described, with its type,
and nothing more is sent."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest
import yaml

from tests.thoughts.factories import ThoughtFactory

pytestmark = pytest.mark.django_db
CONTENT = "Why does checkout latency spike after each deploy?"


def strict_component(document: dict[str, Any], name: str) -> dict[str, Any]:
    """The component as a JSON Schema in which an object may carry only documented fields."""
    document = copy.deepcopy(document)
    for schema in document["components"]["schemas"].values():
        if "properties" in schema and "additionalProperties" not in schema:
            schema["additionalProperties"] = False
    return {**document, "$ref": f"#/components/schemas/{name}"}


@pytest.fixture
def think_schema(anon_api) -> dict[str, Any]:
    document = yaml.safe_load(anon_api.get("/api/schema/").content)
    op = document["paths"]["/api/v1/think"]["post"]
    ref = op["responses"]["201"]["content"]["application/json"]["schema"]["$ref"]
    return strict_component(document, ref.rsplit("/", 1)[1])


def test_a_full_think_answer_matches_the_schema(api, user, memory, settings, think_schema):
    settings.THINK_ENHANCE = True
    for i, cosine in enumerate((0.9, 0.8, 0.7)):
        memory(about=CONTENT, cosine=cosine, name=f"supporting {i}", description="holds up")
    memory(about=CONTENT, cosine=0.85, name="contra", description="this is not the cause")
    earlier = ThoughtFactory(owner=user)
    response = api.post(
        "/api/v1/think",
        {
            "content": CONTENT,
            "hint": "no-such-mode",  # reported as hint_ignored
            "injection_scale": "9",  # clamped to 3, reported
            "tags": ["plan", "unknown-tag"],
            "previous_thought_id": f"thoughts:{earlier.id}",
            "branch_from": "0b6f3c1e-1111-4a4a-9999-123456789abc",  # a forward link: string
            "session_id": "s1",
            "chain_id": "c1",
            "confidence": 0.7,
            "hypothesis": CONTENT,  # the memories are near it, as they are near the content
            "needs_verification": True,
            "min_similarity": 0.5,
            "verbose_analysis": True,
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    # The answer exercises every optional part, so the schema check below covers them all.
    assert body["injected"] and body["verification"]["supporting"]
    assert body["verification"]["contradicting"]
    assert "framework_analysis" in body["delegated_result"]
    telemetry = body["telemetry"]
    assert {"hint_ignored", "timings_ms"} <= set(telemetry)
    assert telemetry["links_telemetry"] == {
        "previous_thought_id": "record",
        "branch_from": "string",
    }
    assert telemetry["clamped"] and telemetry["tags_dropped"] == ["unknown-tag"]
    jsonschema.Draft202012Validator(think_schema).validate(body)


def test_a_minimal_think_answer_matches_the_schema(api, think_schema):
    response = api.post("/api/v1/think", {"content": "a plain note"}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["verification"] is None and "framework_analysis" not in body["delegated_result"]
    jsonschema.Draft202012Validator(think_schema).validate(body)


def test_the_strict_check_catches_an_undocumented_field(api, think_schema):
    body = api.post("/api/v1/think", {"content": "a plain note"}, format="json").json()
    body["telemetry"]["surprise"] = 1
    with pytest.raises(jsonschema.ValidationError, match="surprise"):
        jsonschema.Draft202012Validator(think_schema).validate(body)
