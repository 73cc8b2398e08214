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
    # An indirect sign: the resources, calmly above the question or instead of it.
    assert 'id="safety"' in html and "988" in html and "741741" in html


def _answer(client, state: dict, **fields: str):
    body = {"state": json.dumps(state), "answer_to": state["last_action"]["action_id"], **fields}
    return client.post("/journal/act", body)


def test_answer_pages_are_never_cached(client):
    assert "no-store" in client.get("/journal/")["Cache-Control"]
    response = client.post("/journal/act", {"entry": BOUNDARIES_ENTRY})
    assert "no-store" in response["Cache-Control"]


@pytest.mark.parametrize("entry", ["", "   \n\t  "])
def test_empty_or_blank_entry_is_refused_in_plain_words(client, entry):
    response = client.post("/journal/act", {"entry": entry})
    assert response.status_code == 400
    body = response.content.decode()
    assert "Write something first." in body and 'id="entry-form"' in body
    assert 'id="question"' not in body and "Invalid input" not in body


def test_empty_answer_is_explained_in_plain_words(client):
    state = _state(client.post("/journal/act", {"entry": BOUNDARIES_ENTRY}).content.decode())
    body = _answer(client, state, value="", free_text="  ").content.decode()
    assert "Choose an option or type an answer." in body
    assert "user_event" not in body


def test_a_stale_state_offers_the_entry_again_and_starting_again_works(client):
    state = _state(client.post("/journal/act", {"entry": BOUNDARIES_ENTRY}).content.decode())
    option = state["last_action"]["quick_options"][0]
    assert _answer(client, state, value=option).status_code == 200
    again = _answer(client, state, value=option)  # the Back button resends the old state
    assert again.status_code == 409
    body = again.content.decode()
    assert "already answered" in body and "send the latest state" not in body
    assert 'id="question"' not in body and 'id="entry-form"' in body
    assert BOUNDARIES_ENTRY.split(".")[0] in body  # the entry, ready to start again
    fresh = client.post("/journal/act", {"entry": BOUNDARIES_ENTRY}).content.decode()
    assert 'id="question"' in fresh


def test_result_says_why_it_stopped_in_words(client):
    page = client.post("/journal/act", {"entry": BOUNDARIES_ENTRY}).content.decode()
    for _ in range(6):
        if 'id="result"' in page:
            break
        state = _state(page)
        page = _answer(client, state, value=state["last_action"]["quick_options"][0]).content
        page = page.decode()
    assert "It stopped here because" in page and "stopped: " not in page


def _token(html: str) -> str:
    match = re.search(r'name="turn_token" value="([0-9a-f]{32})"', html)
    assert match, "the question form carries no token"
    return match.group(1)


def _shown(html: str) -> tuple[str, list[str]]:
    """The question on the page and its options (or the result's marker)."""
    import html as h

    question = re.search(r'<h2 id="question">(.*?)</h2>', html)
    options = re.findall(r'class="option" formnovalidate>(.*?)</button>', html)
    return (h.unescape(question.group(1)) if question else "result"), options


def _state_or_none(html: str) -> dict | None:
    return _state(html) if 'name="state"' in html else None


def test_the_same_answer_form_sent_twice_shows_the_next_step_both_times(client):
    page = client.post("/journal/act", {"entry": BOUNDARIES_ENTRY}).content.decode()
    state, token = _state(page), _token(page)
    option = state["last_action"]["quick_options"][0]
    first = _answer(client, state, value=option, turn_token=token)
    second = _answer(client, state, value=option, turn_token=token)  # the double click
    assert first.status_code == second.status_code == 200
    one, two = first.content.decode(), second.content.decode()
    assert "already answered" not in two
    assert _shown(two) == _shown(one)
    assert _state_or_none(two) == _state_or_none(one)  # one turn was taken, not two
    # Another form (another token) for the same old question is still the Back button's case.
    again = _answer(client, state, value=option, turn_token="0" * 32)
    assert again.status_code == 409 and "already answered" in again.content.decode()


def test_every_question_form_has_its_own_token(client):
    pages = [
        client.post("/journal/act", {"entry": BOUNDARIES_ENTRY}).content.decode() for _ in "ab"
    ]
    assert _token(pages[0]) != _token(pages[1])


def test_the_same_question_form_sent_again_with_another_answer_offers_the_entry_again(client):
    page = client.post("/journal/act", {"entry": BOUNDARIES_ENTRY}).content.decode()
    state, token = _state(page), _token(page)
    first, second = state["last_action"]["quick_options"][:2]
    assert _answer(client, state, value=first, turn_token=token).status_code == 200
    other = _answer(client, state, value=second, turn_token=token)  # an old copy of the page
    assert other.status_code == 422
    body = other.content.decode()
    assert "already answered" in body and 'id="entry-form"' in body


def test_the_belief_chart_speaks_to_the_writer(client):
    """The chart's candidates are worded as the options and the crux are (second person), not
    as the catalogue's statements about "the writer"."""
    page = client.post("/journal/act", {"entry": BOUNDARIES_ENTRY}).content.decode()
    chart = page[page.index('id="belief-chart"') :]
    labels = re.findall(r'class="label"[^>]*>([^<]+)<', chart)
    assert len(labels) >= 2
    assert all(label.strip().startswith(("You", "Your", "It ", "Nothing")) for label in labels)
    assert "The writer" not in chart
