"""The pages' display filters: identifiers read as words; the stored values are untouched."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from legacymind.templatetags.lm_words import provider, words


def test_identifiers_read_as_words() -> None:
    assert words("writes_to") == "writes to"
    assert words("depends-on") == "depends on"
    assert words("inner_voice.feedback") == "inner voice feedback"
    assert words(None) == ""


def test_a_provider_is_named_for_a_reader() -> None:
    assert provider("offline-composer") == "the offline composer (no chat model)"
    assert provider("grok") == "Grok"
    assert provider("some_new-provider") == "some new provider"


@pytest.mark.django_db
def test_the_reflection_says_who_wrote_it_in_words(user: Any) -> None:
    client = Client()
    client.force_login(user)
    entry = "I keep saying yes to every request at work and then resent it all weekend."
    page = client.post("/journal/reflect", {"entry": entry}).content.decode()
    assert "Written by the offline composer (no chat model)." in page
    assert "offline-composer" not in page
