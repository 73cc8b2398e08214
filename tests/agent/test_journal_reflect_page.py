"""The journal's "Reflect" (v1) and its opt-in save: the reflection is the API's own service,
nothing is stored unless the writer saves the entry, which then is a private thought."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from thoughts.models import Thought

pytestmark = pytest.mark.django_db

ENTRY = "I keep saying yes to every request at work and then resent it all weekend."


def test_reflect_shows_four_perspectives_and_the_prophecy_and_stores_nothing(user: Any) -> None:
    client = Client()
    client.force_login(user)
    page = client.post("/journal/reflect", {"entry": ENTRY}).content.decode()
    assert page.count('class="perspective"') == 4
    assert 'id="prophecy"' in page and 'id="save-entry"' in page
    assert not Thought.objects.exists()


def test_reflect_without_words_asks_for_them(user: Any) -> None:
    client = Client()
    client.force_login(user)
    response = client.post("/journal/reflect", {"entry": "  "})
    assert response.status_code == 400 and "Write something first." in response.content.decode()


def test_saving_the_entry_makes_one_private_journal_thought(user: Any) -> None:
    client = Client()
    client.force_login(user)
    response = client.post("/thoughts/save-journal", {"entry": ENTRY})
    thought = Thought.objects.get()
    assert response["Location"] == f"/thoughts/{thought.pk}/"
    assert thought.owner == user and thought.is_private and thought.origin == "journal"
    assert thought.content == ENTRY


def test_reflect_at_risk_shows_the_crisis_resources_and_no_reflection(user: Any) -> None:
    from tests.agent.test_distress_doors import RISK_ENTRY

    client = Client()
    client.force_login(user)
    page = client.post("/journal/reflect", {"entry": RISK_ENTRY}).content.decode()
    assert 'id="crisis"' in page and "988" in page
    assert 'id="reflection"' not in page
