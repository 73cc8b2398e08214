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
    monkeypatch.setenv("GROK_TIMEOUT", "1")
    grok.chat_fn = lambda messages: time.sleep(2.5) or "{}"
    started = time.monotonic()
    response = reflect(client)
    assert time.monotonic() - started < 1.8
    assert response.json()["provider"] == "offline-composer"
