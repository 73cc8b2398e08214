from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

URL = "/api/v1/think"


def test_think_returns_the_spec_shape_and_stores_the_thought(api, user):
    r = api.post(URL, {"content": "What makes a good morning routine?"}, format="json")
    assert r.status_code == 201, r.json()
    body = r.json()
    assert set(body) == {
        "mode_selected", "reason", "delegated_result", "links", "telemetry", "verification",
        "injected",
    }  # fmt: skip
    assert body["delegated_result"]["thought_id"].startswith("thoughts:")
    assert body["delegated_result"]["embedding_dim"] == 384
