"""The journal's turns as htmx sends them (without a browser; the browser flow is in
tests/e2e/test_journal_browser.py): an answer sent with ``HX-Request`` gets the changing region
alone, marked so the page swaps it, whatever its status; the same answer sent as a plain POST
still gets the whole page (tests/agent/test_pages.py runs that flow to the crux)."""

from __future__ import annotations

import html as h
import json
import re
from typing import Any

import pytest

from tests.agent.conftest import BOUNDARIES_ENTRY

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def _state(page: str) -> dict[str, Any]:
    match = re.search(r'name="state" value="([^"]*)"', page)
    assert match, "no question form on the page"
    state: dict[str, Any] = json.loads(h.unescape(match.group(1)))
    return state


def _answer(client: Any, state: dict[str, Any], value: str, **extra: Any) -> Any:
    body = {"state": json.dumps(state), "answer_to": state["last_action"]["action_id"]}
    return client.post("/journal/act", {**body, "value": value}, **extra)


def _region(response: Any) -> str:
    """The swapped region: marked for the page's swap, and only the region (no layout)."""
    assert response["X-Journal-Region"] == "1"
    body: str = response.content.decode()
    assert re.match(r'\s*<div id="journal">', body), body[:200]
    assert "<html" not in body and "<h1>" not in body and "<script" not in body
    return body


def test_the_start_is_a_page_load_and_the_question_is_sent_by_htmx(client: Any) -> None:
    """The entry form posts as a page (a history entry to come Back to); the question form
    posts with htmx into the region, and still works as a plain form."""
    start = client.get("/journal/").content.decode()
    entry_form = start[
        start.index('id="entry-form"') : start.index("</form>", start.index('id="entry-form"'))
    ]
    assert "hx-post" not in entry_form
    page = client.post("/journal/act", {"entry": BOUNDARIES_ENTRY})
    assert "X-Journal-Region" not in page
    html = page.content.decode()
    assert "<html" in html and '<div id="journal">' in html
    form = re.search(r'<form method="post" action="/journal/act" id="question-form"([^>]*)>', html)
    assert form, "no question form"
    assert 'hx-post="/journal/act"' in form.group(1)
    assert 'hx-target="#journal"' in form.group(1) and 'hx-swap="outerHTML"' in form.group(1)
    assert "hx-push-url" not in form.group(1)  # a turn adds no history entry


def test_an_answer_sent_by_htmx_gets_the_next_question_and_chart_then_the_crux(
    client: Any,
) -> None:
    page = client.post("/journal/act", {"entry": BOUNDARIES_ENTRY}).content.decode()
    asked = []
    for _ in range(6):
        state = _state(page)
        asked.append(state["last_action"]["action_id"])
        response = _answer(client, state, state["last_action"]["quick_options"][0], **HTMX)
        assert response.status_code == 200
        page = _region(response)
        if 'id="result"' in page:
            break
        assert 'id="question"' in page and 'id="belief-chart"' in page
        assert _state(page)["last_action"]["action_id"] not in asked  # the next question
    assert 'id="crux"' in page and 'id="result-heading"' in page
    assert 'id="belief-chart"' in page and 'id="save-form"' in page
    assert "It stopped here because" in page


def test_a_refused_answer_comes_back_as_the_region_with_its_status(client: Any) -> None:
    """The page swaps a 4xx region too (it is marked): the question stays with the error."""
    state = _state(client.post("/journal/act", {"entry": BOUNDARIES_ENTRY}).content.decode())
    empty = _answer(client, state, "", **HTMX)
    assert empty.status_code == 400
    region = _region(empty)
    assert 'id="error"' in region and "Choose an option or type an answer." in region
    assert 'id="question"' in region
    option = state["last_action"]["quick_options"][0]
    assert _answer(client, state, option, **HTMX).status_code == 200
    stale = _answer(client, state, option, turn_token="0" * 32, **HTMX)  # an old copy
    assert stale.status_code == 409
    region = _region(stale)
    assert "already answered" in region and 'id="entry-form"' in region
    assert BOUNDARIES_ENTRY.split(".")[0] in region


def test_typed_words_that_trip_the_guardrail_swap_in_the_crisis_resources(client: Any) -> None:
    state = _state(client.post("/journal/act", {"entry": BOUNDARIES_ENTRY}).content.decode())
    body = {"state": json.dumps(state), "answer_to": state["last_action"]["action_id"]}
    body.update(value="", free_text="Honestly I don't want to be alive anymore.")
    response = client.post("/journal/act", body, **HTMX)
    region = _region(response)
    assert 'id="crisis"' in region and 'data-level="risk"' in region
    assert "988" in region and 'id="question"' not in region and 'id="crux"' not in region
