"""v1 /reflections when Grok answers a page instead of a completion, or hangs: the offline
composer answers, within GROK_TIMEOUT."""

from __future__ import annotations

import time

import pytest

from tests.agent.conftest import BOUNDARIES_ENTRY
from tests.kg.grok_faults import answer_html

pytestmark = pytest.mark.django_db


@pytest.fixture
def grok(openai_stub, monkeypatch):
    monkeypatch.setenv("GROK_API_KEY", "test-key")
    monkeypatch.setenv("GROK_BASE_URL", openai_stub.base_url)
    return openai_stub


def reflect(client):
    return client.post("/reflections", {"journal_entry": {"text": BOUNDARIES_ENTRY}}, format="json")


def test_v1_reflection_uses_the_offline_composer_when_grok_answers_an_html_page(client, grok):
    answer_html(grok)
    response = reflect(client)
    assert response.status_code == 200, response.content
    assert response.json()["provider"] == "offline-composer"
    assert len(grok.requests) == 1


def test_v1_reflection_waits_at_most_grok_timeout_for_a_hanging_grok(client, grok, monkeypatch):
    # The offline composer's own work (the local model) is timed first, with a Grok that fails
    # at once, so that a loaded machine slows both runs alike and only the wait is read: the
    # timeout (1 s) must end it, long before the stub's 5 s hang would.
    monkeypatch.setenv("GROK_TIMEOUT", "1")
    answer_html(grok)
    started = time.monotonic()
    assert reflect(client).json()["provider"] == "offline-composer"
    quick = time.monotonic() - started

    grok.chat_fn = lambda messages: time.sleep(5) or "{}"
    started = time.monotonic()
    response = reflect(client)
    waited = time.monotonic() - started - quick
    assert waited < 1 + 1.5, f"waited {waited:.2f} s beyond the offline work for a 1 s timeout"
    assert response.json()["provider"] == "offline-composer"
    assert len(grok.requests) == 2
