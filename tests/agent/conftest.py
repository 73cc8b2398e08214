from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.management import call_command
from rest_framework.test import APIClient

# The project's dev sets live in ../shared/datasets; a copy of the one the tests read sits in
# fixtures/ so a clone outside the workspace tests the same items.
SHARED = Path(__file__).resolve().parents[3] / "shared" / "datasets"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

# Strong, unambiguous boundaries cues; no risk language.
BOUNDARIES_ENTRY = (
    "Tash texted at midnight again asking if I could fit her in for a free appointment before "
    "work. I said yes, like I always say yes. I can't say no to her. Every time she asks I drop "
    "everything and help, and then I'm annoyed that I never hold the line."
)
# Boundaries again, with a timeline and constraints the entry spells out: the agent may read
# those (EvidenceRequest) once the writer has answered.
GOLDEN_ENTRY = (
    "My sister texted at 11pm again asking me to cover her shifts this week. I said yes, like "
    "always. I can't say no to her, even with my own deadline on Friday. Every time she asks I "
    "drop everything, and then I'm annoyed that I never hold the line."
)
MIXED_ENTRY = (
    "The audition is Saturday and I'm scared I'll fail in front of everyone. I keep thinking "
    "about what people will think, and whether I even deserve a part. I'm exhausted from the "
    "shifts and I haven't slept, and nobody here to talk to about it."
)


@pytest.fixture
def agent_cache(db: None) -> Iterator[None]:
    """The database cache (what idempotency and concurrency share between processes)."""
    call_command("createcachetable", verbosity=0)
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def client(agent_cache: None, user: User) -> APIClient:
    """A signed-in writer (a session, as the browser pages have): every journaling endpoint
    and page needs a login."""
    api = APIClient()
    api.force_login(user)
    return api


@pytest.fixture
def grok(openai_stub: Any, monkeypatch: pytest.MonkeyPatch, settings: Any) -> Any:
    """The crux's chat model is the loopback OpenAI-wire server (Grok's settings point at it);
    ``AGENT_CRUX_MODEL`` auto, so the agent asks it."""
    settings.AGENT_CRUX_MODEL = "auto"
    monkeypatch.setenv("GROK_API_KEY", "test-key")
    monkeypatch.setenv("GROK_BASE_URL", openai_stub.base_url)
    return openai_stub


def load(name: str) -> list[dict[str, Any]]:
    path = SHARED / name if (SHARED / name).exists() else FIXTURES / name
    return [json.loads(line) for line in path.open() if line.strip()]


def act(client: APIClient, body: dict[str, Any], **headers: Any) -> Any:
    return client.post("/v3/agent/act", body, format="json", **headers)


def init(client: APIClient, text: str = BOUNDARIES_ENTRY) -> dict[str, Any]:
    response = act(client, {"mode": "init", "journal_entry": {"text": text}})
    assert response.status_code == 200, response.content
    return response.json()


def advance(client: APIClient, data: dict[str, Any], pick: int = 0, **headers: str) -> Any:
    """One continue: answers AskUser with option ``pick``, else continues with no event."""
    action = data["action"]
    event = None
    if action["type"] == "AskUser":
        event = {"answer_to": action["action_id"], "value": action["quick_options"][pick]}
    return act(client, {"mode": "continue", "state": data["state"], "user_event": event}, **headers)


def run_to_question(client: APIClient, data: dict[str, Any]) -> dict[str, Any]:
    while not data["complete"] and data["action"]["type"] != "AskUser":
        response = advance(client, data)
        assert response.status_code == 200, response.content
        data = response.json()
    return data


def one_rate_window(settings: Any, client: APIClient, per_minute: int) -> None:
    """Set the agent's rate guard to `per_minute` and start counting where the calls a test
    makes fall in one window.

    The guard counts turns in calendar minutes. A first call that loads the local model can
    take seconds, and a minute boundary between two counted calls would reset the count; so
    the model is warmed first with the guard off, and when fewer than 20 s are left in this
    minute the test waits for the next.
    """
    settings.AGENT_RATE_PER_MINUTE = 0
    assert (
        act(client, {"mode": "init", "journal_entry": {"text": "A quiet day."}}).status_code == 200
    )
    settings.AGENT_RATE_PER_MINUTE = per_minute
    left = 60 - time.time() % 60
    if left < 20:
        time.sleep(left + 0.05)
