"""Ids in JSON bodies are strings: a number is a 400 naming the field, before anything runs,
not a lookup of the UUID DRF would make of it (99999 -> 00000000-...-01869f) answered 404."""

from __future__ import annotations

import pytest

from innervoice.models import DialogueThread
from kg.models import EntityCandidate

pytestmark = pytest.mark.django_db


def refused(response, field: str) -> None:
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error_code"] == "invalid"
    assert list(body["fields"]) == [field]
    assert "00000000-0000" not in response.content.decode()


@pytest.mark.parametrize("value", [99999, 1.5, True, ["x"]])
def test_an_inner_voice_thread_id_must_be_a_string(api, value):
    body = {"query": "what next?", "thread_id": value}
    refused(api.post("/api/v1/inner-voice", body, format="json"), "thread_id")
    assert not DialogueThread.objects.exists()


def test_a_kg_extract_thought_id_must_be_a_string(api):
    body = {"text": "The Orbit team uses Qux.", "thought_id": 12}
    refused(api.post("/api/v1/kg/extract", body, format="json"), "thought_id")
    assert not EntityCandidate.objects.exists()


def test_a_memorys_source_thought_id_must_be_a_string(mod_api):
    body = {"name": "Qux", "source_thought_id": 12}
    refused(mod_api.post("/api/v1/kg/entities/", body, format="json"), "source_thought_id")


def test_a_uuid_string_still_reads(api, user):
    thread = DialogueThread.objects.create(owner=user, topic="billing")
    response = api.post(
        "/api/v1/inner-voice", {"query": "q", "thread_id": str(thread.id)}, format="json"
    )
    assert response.status_code == 201, response.content
    assert response.json()["thread"]["id"] == str(thread.id)
