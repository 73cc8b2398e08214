"""The inner voice reads its question with the distress detector: a question that shows a
warning sign gets its answer with crisis resources beside it, and the question is still never
stored or logged."""

from __future__ import annotations

import logging

import pytest
from django.test import Client

from innervoice.models import DialogueThread
from tests.innervoice.conftest import SYNTH, ask
from thoughts.models import Thought

pytestmark = pytest.mark.django_db

RISKY = (
    "Which of my notes should I leave for my sister once I've picked the night to do it ZQXRISK?"
)


def test_a_question_with_a_warning_sign_gets_its_answer_with_crisis_resources(api, voice, caplog):
    caplog.set_level(logging.DEBUG)
    body = ask(api, query=RISKY).json()
    assert body["answer"] == SYNTH
    assert body["safety"]["level"] in ("concern", "risk")
    assert body["safety"]["category"] in ("plan_means", "goodbye", "affairs_in_order")
    assert body["safety"]["message"]
    contacts = " ".join(r["contact"] for r in body["safety"]["crisis_resources"])
    assert "988" in contacts and "findahelpline.com" in contacts
    assert "ZQXRISK" not in str(body["safety"])
    assert not Thought.objects.filter(content__contains="ZQXRISK").exists()
    assert "ZQXRISK" not in caplog.text


def test_an_ordinary_question_has_no_notice(api, voice):
    body = ask(api).json()
    assert body["safety"] == {
        "level": "none", "category": None, "message": None, "crisis_resources": []
    }  # fmt: skip


def test_the_thread_page_shows_the_resources_beside_the_answer(user, voice):
    browser = Client()
    browser.force_login(user)
    response = browser.post("/inner-voice/ask", {"query": RISKY})
    thread = DialogueThread.objects.get()
    level = "risk" if "safety=risk" in response["Location"] else "concern"
    assert response["Location"] == (
        f"/inner-voice/threads/{thread.id}/?asked=1&safety={level}#exchange-1"
    )
    page = browser.get(response["Location"]).content.decode()
    assert 'id="safety"' in page and f'data-level="{level}"' in page and "988" in page
    assert SYNTH in page and "ZQXRISK" not in page
    # Without the ask's notice (a bookmark, another exchange) the answer stands alone.
    plain = browser.get(f"/inner-voice/threads/{thread.id}/").content.decode()
    assert 'id="safety"' not in plain
