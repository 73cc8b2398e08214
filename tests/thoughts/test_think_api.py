"""The response of POST /api/v1/think and what it stores."""

from __future__ import annotations

import pytest

from thoughts.models import Thought

pytestmark = pytest.mark.django_db

URL = "/api/v1/think"


def test_think_returns_the_spec_shape_and_stores_the_thought(api, user, memory):
    memory(about="Morning routine ideas", cosine=0.9, name="Coffee")
    r = api.post(
        URL,
        {
            "content": "Morning routine ideas",
            "hint": "question",
            "injection_scale": 1,
            "tags": ["idea"],
            "session_id": "s1",
            "verbose_analysis": True,
        },
        format="json",
    )
    assert r.status_code == 201, r.json()
    body = r.json()
    assert set(body) == {
        "mode_selected", "reason", "delegated_result", "links", "telemetry", "verification",
        "injected",
    }  # fmt: skip
    thought = Thought.objects.get()
    assert body["delegated_result"] == {
        "thought_id": f"thoughts:{thought.id}",
        "embedding_model": "feature-hash-384",
        "embedding_dim": 384,
        "memories_injected": 1,
    }
    assert body["mode_selected"] == "question" and body["reason"] == "hint specified"
    assert set(body["links"]) == {
        "session_id", "chain_id", "previous_thought_id", "revises_thought", "branch_from",
        "confidence",
    }  # fmt: skip
    telemetry = body["telemetry"]
    assert {"trigger_matched", "heuristics", "links_telemetry", "injection"} <= set(telemetry)
    assert set(telemetry["timings_ms"]) >= {"embed", "inject", "store"}
    assert body["verification"] is None
    assert set(body["injected"][0]) == {
        "id", "kind", "ref", "name", "similarity", "score", "rank", "reason",
    }  # fmt: skip

    assert thought.owner == user
    assert thought.content == "Morning routine ideas"
    assert (thought.mode, thought.origin, thought.tags) == ("question", "human", ["idea"])
    assert thought.embedding_dim == 384 and thought.embedding_provider == "hash"
    assert thought.embedding_model == "feature-hash-384" and thought.embedded_at is not None
    assert thought.is_private is False


def test_timings_only_with_verbose_analysis(api):
    r = api.post(URL, {"content": "Quick note", "injection_scale": 0}, format="json")
    assert "timings_ms" not in r.json()["telemetry"]


def test_a_thought_can_be_written_private(api):
    r = api.post(URL, {"content": "Just for me", "is_private": True}, format="json")
    assert r.status_code == 201
    assert Thought.objects.get().is_private is True


def test_the_api_root_links_to_think(api):
    assert api.get("/api/v1/").json()["think"].endswith("/api/v1/think")


def test_get_is_not_allowed(api):
    r = api.get(URL)
    assert r.status_code == 405
    assert r.json()["error_code"] == "method_not_allowed"
