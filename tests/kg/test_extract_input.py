"""What /api/v1/kg/extract reads: a JSON string with something in it besides whitespace and
citations; and what it tells a user when no extractor can answer."""

from __future__ import annotations

import json
import logging

import pytest

from kg.models import EdgeCandidate, EntityCandidate
from tests.kg.test_extraction_chain import GROK_JSON

pytestmark = pytest.mark.django_db
EXTRACT = "/api/v1/kg/extract"
PLAIN = "No extraction provider is available right now; try again later."


@pytest.fixture
def prompts(fake_cli, grok, monkeypatch, tmp_path):
    """Both models ready to answer with entities; returns the file the CLI's prompt goes to."""
    record = tmp_path / "prompt.txt"
    monkeypatch.setenv("FAKE_CLI_RECORD", str(record))
    grok.chat_fn = lambda messages: GROK_JSON
    return record


@pytest.mark.parametrize("text", ["   ", "\n\t\n", " \r\n "])
def test_whitespace_only_text_is_a_400_naming_text_and_calls_no_model(api, prompts, grok, text):
    response = api.post(EXTRACT, {"text": text}, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["error_code"] == "invalid"
    assert response.json()["fields"]["text"] == ["This field may not be blank."]
    assert not prompts.exists() and grok.requests == []


@pytest.mark.parametrize("value", [5, 5.5, True, ["a"], {"a": 1}])
def test_text_that_is_not_a_string_is_a_400(api, prompts, value):
    response = api.post(EXTRACT, {"text": value, "dry_run": True}, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["fields"]["text"] == ["Not a valid string."]
    assert not prompts.exists()


@pytest.mark.parametrize(
    "text",
    ["Sources: thoughts:abc, kge:1", "[thoughts:3f2a] kgo:7", "**References**:\n- kge:1\n\n  "],
)
def test_text_that_is_only_citations_calls_no_model_and_stages_nothing(api, prompts, grok, text):
    response = api.post(EXTRACT, {"text": text}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["entities"] == [] and body["edges"] == []
    assert body["staged"] == {"entities": 0, "edges": 0}
    assert body["provider"] == "none"
    assert not prompts.exists() and grok.requests == []
    assert not EntityCandidate.objects.exists() and not EdgeCandidate.objects.exists()


def test_the_503_says_a_plain_sentence_and_the_log_has_the_details(
    api, fake_cli, grok, settings, caplog
):
    fake_cli("fail")
    grok.fail_next(401, times=2)
    settings.IV_HEURISTIC_FALLBACK = False
    text = "The zebra-ledger service depends on Cassandra."
    with caplog.at_level(logging.DEBUG, logger="kg.extract"):
        response = api.post(EXTRACT, {"text": text}, format="json")
    assert response.status_code == 503, response.content
    assert response.json() == {
        "error_code": "extraction_unavailable",
        "detail": PLAIN,
        "fields": {},
    }
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    logged = json.loads(warnings[0].getMessage().split(" ", 1)[1])
    failures = " ".join(logged["failures"])
    assert "exited 3" in failures and "AuthenticationError" in failures
    assert "IV_HEURISTIC_FALLBACK=0" in logged["heuristic_fallback"]
    for record in caplog.records:
        assert "zebra-ledger" not in record.getMessage()
