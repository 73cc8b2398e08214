"""Grok answers that are not a chat completion, and Grok hanging: the chain's fallback runs, and
GROK_TIMEOUT bounds the wait, retry included. Through the API, against the loopback server."""

from __future__ import annotations

import json
import time

import pytest

from kg.extraction import extract
from kg.models import EntityCandidate
from tests.kg.grok_faults import answer_html, answer_raw
from tests.kg.test_extraction_chain import GROK_JSON, MODEL_TEXT

pytestmark = pytest.mark.django_db
EXTRACT = "/api/v1/kg/extract"
TEXT = "The Billing API depends on Postgres."


def test_a_200_html_page_from_grok_falls_back_to_the_heuristic(api, grok):
    answer_html(grok)
    response = api.post(EXTRACT, {"text": TEXT}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["provider"] == "heuristic"
    assert {e["name"] for e in body["entities"]} == {"Billing API", "Postgres"}
    assert body["staged"]["entities"] == 2
    assert set(EntityCandidate.objects.values_list("provider", flat=True)) == {"heuristic"}
    assert len(grok.requests) == 1  # asked once: a page is not a transient failure


def test_a_200_html_page_with_the_fallback_off_is_the_503_envelope(api, grok, settings):
    answer_html(grok)
    settings.IV_HEURISTIC_FALLBACK = False
    response = api.post(EXTRACT, {"text": TEXT, "dry_run": True}, format="json")
    assert response.status_code == 503, response.content
    assert response.json()["error_code"] == "extraction_unavailable"


@pytest.mark.parametrize(
    "body",
    [
        {"choices": "none"},
        {"choices": [{"message": "hello"}]},
        {"choices": [{"message": {"role": "assistant", "content": 5}}]},
        {"choices": []},
        [1, 2, 3],
    ],
    ids=["choices-a-string", "message-a-string", "content-a-number", "no-choices", "a-list"],
)
def test_json_that_is_no_chat_completion_falls_back_to_the_heuristic(grok, body):
    answer_raw(grok, "application/json", json.dumps(body).encode())
    assert extract(TEXT).provider == "heuristic"


def test_grok_timeout_bounds_the_whole_wait_and_the_fallback_answers(api, grok, monkeypatch):
    """The SDK's retry gave a hanging endpoint a second full GROK_TIMEOUT."""
    monkeypatch.setenv("GROK_TIMEOUT", "1")
    grok.chat_fn = lambda messages: time.sleep(2.5) or GROK_JSON
    started = time.monotonic()
    response = api.post(EXTRACT, {"text": TEXT, "dry_run": True}, format="json")
    elapsed = time.monotonic() - started
    assert response.status_code == 200, response.content
    assert response.json()["provider"] == "heuristic"
    assert elapsed < 1.8
    assert len(grok.requests) == 1


def test_a_quick_transient_grok_failure_is_retried_once_within_the_budget(grok, monkeypatch):
    monkeypatch.setenv("GROK_TIMEOUT", "5")
    grok.chat_fn = lambda messages: GROK_JSON
    grok.fail_next(500)
    assert extract(MODEL_TEXT).provider == "grok"
    assert len(grok.requests) == 2
