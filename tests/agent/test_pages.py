"""Server-rendered journaling pages (without a browser)."""

from __future__ import annotations

import json
import re

import pytest

from tests.agent.conftest import BOUNDARIES_ENTRY, load

pytestmark = pytest.mark.django_db


def _state(html: str) -> dict:
    import html as h

    match = re.search(r'name="state" value="([^"]*)"', html)
    assert match
    return json.loads(h.unescape(match.group(1)))


def test_journal_page_renders_form(client):
    response = client.get("/journal/")
    assert response.status_code == 200
    assert b'id="entry-form"' in response.content


def test_journal_entry_leads_to_a_question_then_a_result(client):
    page = client.post("/journal/act", {"entry": BOUNDARIES_ENTRY}).content.decode()
    assert 'id="question"' in page
    for _ in range(6):
        state = _state(page)
        action = state["last_action"]
        page = client.post(
            "/journal/act",
            {
                "state": json.dumps(state),
                "answer_to": action["action_id"],
                "value": action["quick_options"][0],
            },
        ).content.decode()
        if 'id="result"' in page:
            break
    assert 'id="crux"' in page


def test_empty_answer_keeps_the_question_on_screen(client):
    page = client.post("/journal/act", {"entry": BOUNDARIES_ENTRY}).content.decode()
    state = _state(page)
    response = client.post(
        "/journal/act",
        {
            "state": json.dumps(state),
            "answer_to": state["last_action"]["action_id"],
            "value": "",
            "free_text": "",
        },
    )
    assert response.status_code == 400
    body = response.content.decode()
    assert 'id="error"' in body and 'id="question"' in body


def test_journal_distress_shows_crisis_resources(client):
    page = client.post("/journal/act", {"entry": load("crux_safety_dev.jsonl")[4]["entry"]})
    html = page.content.decode()
    assert 'id="crisis"' in html and "988" in html and "741741" in html
