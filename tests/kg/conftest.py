from __future__ import annotations

import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

FAKE_CLI = Path(__file__).parent / "fixtures" / "fake_gemini.py"


@pytest.fixture
def fake_cli(monkeypatch: pytest.MonkeyPatch):
    """Point the CLI stage at the fixture script; returns a setter for its mode."""
    monkeypatch.setenv("IV_SCRIPT_PATH", f"{sys.executable} {FAKE_CLI}")

    def mode(value: str) -> None:
        monkeypatch.setenv("FAKE_CLI_MODE", value)

    mode("ok")
    return mode


@pytest.fixture
def grok(monkeypatch: pytest.MonkeyPatch, openai_stub):
    """Grok enabled against the loopback OpenAI-wire server."""
    monkeypatch.setenv("GROK_API_KEY", "test-key")
    monkeypatch.setenv("GROK_BASE_URL", openai_stub.base_url)
    monkeypatch.setenv("GROK_MODEL", "grok-test")
    monkeypatch.setenv("IV_ALLOW_GROK", "true")
    return openai_stub


@pytest.fixture
def mod_client(moderator: User) -> Client:
    """A KG moderator signed in to the admin (staff)."""
    moderator.is_staff = True
    moderator.save(update_fields=["is_staff"])
    client = Client()
    client.force_login(moderator)
    return client
