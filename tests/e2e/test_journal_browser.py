"""The journaling flow in a real browser (Debian's chromium, never downloaded)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connections

from legacymind.providers import embeddings
from tests.e2e.conftest import (
    ENTRY,
    answer,
    assert_accessible,
    needs_chromium,
    sign_in,
    start_entry,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]


def test_write_entry_answer_questions_and_see_the_crux(
    page: Any, live_server: Any, settings: Any
) -> None:
    # The agent's answer model compares options and cruxes by meaning: the real sentence model.
    settings.EMBEDDING_PROVIDER = "local"
    embeddings._cached.cache_clear()
    embeddings.warm_up()  # as the server does at start-up: the first click does not load it
    sign_in(page, live_server)
    page.fill("#entry", ENTRY)
    page.click("#start")
    page.wait_for_selector("#question-form", state="attached")
    assert_accessible(page)
    charts = []
    for _ in range(6):
        if page.query_selector("#result"):
            break
        if page.locator("#continue").is_visible():  # a concern: the writer chooses to go on
            page.click("#continue")
        # The belief over the candidate cruxes is drawn after every turn.
        charts.append(page.locator("#belief-chart .value").all_inner_texts())
        options = page.locator("button.option")
        texts = options.all_inner_texts()
        assert texts[-1] == "Not sure / something else"
        wanted = next((i for i, t in enumerate(texts) if "say no" in t), 0)
        answer(page, options.nth(wanted))
    # The belief chart is redrawn after each answer: where it ended is not where it began.
    final = page.locator("#belief-chart .value").all_inner_texts()
    assert charts and all(charts) and final and final != charts[0], (charts, final)
    assert (page.locator("#trail").text_content() or "").strip()  # in a closed <details>
    assert_accessible(page)
    # The crux speaks to the writer about their entry (issue 32): second person, and the
    # entry's own sentences cited verbatim. (Which theme it settles on depends on the turn
    # seeds; the agent's accuracy is measured in bench/crux.py, not here.)
    crux = page.locator("#crux").inner_text()
    assert crux.startswith("You"), crux
    cited = page.locator("#evidence mark").all_inner_texts()
    assert cited and all(span.strip() in ENTRY for span in cited), cited
    # Why it stopped, in words (confident enough, or more questions would tell little).
    stopped = page.locator("#stopped").inner_text()
    assert "It stopped here because" in stopped and "_" not in stopped, stopped
    # On a phone the reasoning trail wraps instead of widening the page.
    page.set_viewport_size({"width": 375, "height": 800})
    page.click("details summary")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    page.click("#again")
    page.wait_for_selector("#entry")


def test_a_concern_shows_the_resources_first_and_the_writer_chooses_to_go_on_once(
    page: Any, live_server: Any
) -> None:
    sign_in(page, live_server)
    start_entry(page, UNDECIDED_CONCERN, shows="#safety")
    notice = page.locator("#safety")
    assert notice.get_attribute("data-level") == "concern"
    assert "988" in notice.inner_text() and "findahelpline.com" in notice.inner_text()
    assert_accessible(page)
    # The question waits until the writer chooses to go on.
    assert not page.locator("#question-form").is_visible()
    page.click("#continue")
    assert page.locator("#question-form").is_visible()
    assert page.locator("#safety").is_visible()  # the resources stay on the page
    # Later turns, swapped in by htmx, keep the resources calmly at the top but do not ask
    # again: the writer chose to go on in this conversation, and the question is ready.
    later = 0
    for _ in range(6):
        answer(page, page.locator("button.option").last)  # undecided: the loop asks on
        assert page.locator("#safety").get_attribute("data-level") == "concern"
        if not page.locator("#question-form").count():
            break  # the loop ended: the notice still heads the result
        later += 1
        assert page.locator("#question-form").is_visible()
        assert page.locator("#continue").count() == 0
        assert page.evaluate("document.activeElement.id") == "question"
    assert later >= 1  # at least one later question was shown without asking again
    assert page.locator("#result").count() == 1


def test_a_slow_turn_shows_that_it_is_working_and_is_not_sent_twice(
    page: Any, live_server: Any
) -> None:
    """While a turn is on its way (held here, as a slow model on a busy machine would hold
    it) the pressed button spins, a note says what is happening, and further clicks send
    nothing: the form never looks frozen, and never sends an answer twice."""
    sign_in(page, live_server)
    page.fill("#entry", ENTRY)
    # Starting is a page load: the page is read in the same task as the click, before the
    # browser leaves it (a script waiting on a page that is being left can hang).
    shown = page.evaluate(
        """() => { document.querySelector("#start").click();
                   return [document.querySelector("#start").getAttribute("aria-busy"),
                           document.querySelector("#entry-form .busy-note").textContent]; }"""
    )
    assert shown[0] == "true" and "Reading your entry" in shown[1], shown
    page.wait_for_selector("#question")
    assert page.locator("[aria-busy]").count() == 0

    # An answer is sent by htmx: held here until the page has been read.
    held: list[Any] = []
    page.route("**/journal/act", lambda route: held.append(route))
    old = page.locator("#journal").element_handle()
    options = page.locator("button.option")
    options.first.click()
    page.wait_for_selector("#question-form button.option[aria-busy=true]")
    assert "Thinking about your answer" in page.locator("#question-form .busy-note").inner_text()
    assert page.locator("#question-form.busy").count() == 1
    assert_accessible(page)
    options.nth(1).click()  # an impatient second click while the first is on its way
    for _ in range(50):  # time for a second request to reach the route, were one sent
        page.wait_for_timeout(100)
        if len(held) > 1:
            break
    assert len(held) == 1
    held.pop().continue_()
    page.wait_for_function("old => !old.isConnected", arg=old)
    page.wait_for_selector("#question, #result")
    assert page.locator("[aria-busy]").count() == 0
    assert held == []


def test_a_risk_stops_with_the_crisis_resources_and_no_question(
    page: Any, live_server: Any
) -> None:
    from tests.agent.test_distress_doors import RISK_ENTRY

    sign_in(page, live_server)
    start_entry(page, RISK_ENTRY, shows="#crisis")
    notice = page.locator("#safety")
    assert notice.get_attribute("data-level") == "risk"
    assert notice.get_attribute("role") == "alert"
    assert "988" in notice.inner_text() and "Text HOME to 741741" in notice.inner_text()
    assert page.locator("#question-form").count() == 0 and page.locator("#crux").count() == 0
    assert_accessible(page)
    # Calm in either scheme: still no violation once the colours have switched (Pico eases
    # them over 0.2 s, and axe would read a colour half-way).
    page.emulate_media(color_scheme="dark")
    page.wait_for_timeout(500)
    assert_accessible(page)


def test_reflect_shows_four_perspectives_and_the_prophecy_and_saving_is_opt_in(
    page: Any, live_server: Any
) -> None:
    from thoughts.models import Thought

    sign_in(page, live_server)
    assert_accessible(page)
    page.fill("#entry", ENTRY)
    page.click("#reflect")
    page.wait_for_selector("#reflection")
    assert page.locator(".perspective").count() == 4
    assert page.locator("#synthesis").inner_text().strip()
    assert_accessible(page)
    try:
        assert not Thought.objects.exists()  # nothing is stored by reflecting
    finally:
        connections.close_all()
    page.click("#save-entry")
    page.wait_for_url("**/thoughts/*/")
    assert page.locator("#content").inner_text().startswith("Tash texted at midnight")
    assert "private" in page.locator("#thought").inner_text()


# Two themes in one entry (the crux development set, writer 01): an undecided writer leaves
# both standing, so the end shows a crux and a secondary theme.
TWO_THEMES = (
    "Dr. Okafor replied to my chapter draft with one line: 'Fine, see comments.' Fine. I've read "
    "it maybe twenty times. The comments are mostly commas. Tobias got three paragraphs back on "
    "his draft, with 'really promising' in the middle. I redid my figures until 2am even though "
    "she didn't mention them. I want her to say something, anything, that means she thinks I "
    "belong in the lab. I know 'fine' from her might be a good thing. I can't feel it as a good "
    "thing."
)


# A concern in an entry with two themes: an undecided writer is asked more than once, so the
# later turns are seen (the concern entry alone now settles after one answer).
UNDECIDED_CONCERN = (
    TWO_THEMES + " Honestly my family would have an easier life if they didn't have to keep "
    "carrying me."
)


def test_an_undecided_writer_ends_with_a_crux_secondary_themes_and_the_chart(
    page: Any, live_server: Any
) -> None:
    sign_in(page, live_server)
    page.fill("#entry", TWO_THEMES)
    page.click("#start")
    page.wait_for_selector("#question-form", state="attached")
    for _ in range(8):
        if page.query_selector("#result"):
            break
        if page.locator("#continue").is_visible():
            page.click("#continue")
        assert page.locator("#belief-chart .bar").count() >= 2
        answer(page, page.locator("button.option").last)  # "Not sure / something else"
    assert page.locator("#crux").inner_text().strip()
    assert page.locator("#themes li").count() >= 1
    assert page.locator("#belief-chart .bar").count() >= 2
    assert (page.locator("#trail").text_content() or "").strip()  # in a closed <details>


def test_turns_swap_in_place_focus_the_new_question_and_back_returns_to_the_entry(
    page: Any, live_server: Any
) -> None:
    """With script each answer is sent by htmx and only the journal's region changes: no page
    load between the first question and the crux (a marker set on the window survives), the
    chart is redrawn, the focus lands on the new question, and the turns add no history entry,
    so Back leaves the conversation for the entry it started from."""
    sign_in(page, live_server)
    start_entry(page, TWO_THEMES)  # a page load: the entry form is the entry Back returns to
    assert page.url == live_server.url + "/journal/act"
    # The entry the questions quote can be read again beside them, folded away.
    assert page.locator("#your-entry").get_attribute("open") is None
    assert (page.locator("#your-entry p").text_content() or "").strip() == TWO_THEMES
    length = page.evaluate("history.length")
    page.evaluate("window.journalMarker = 'no page load since the first question'")
    charts, asked, focused = [], [], []
    for turn in range(8):
        if page.query_selector("#result"):
            break
        if page.locator("#continue").is_visible():
            page.click("#continue")
        charts.append(page.locator("#belief-chart .value").all_inner_texts())
        asked.append(page.input_value("input[name=answer_to]"))
        if turn == 1:  # "something else", in the writer's own words
            page.fill("#free_text", "Mostly that I want her approval.")
            answer(page, page.locator("#send-free-text"))
        else:
            answer(page, page.locator("button.option").last)  # "Not sure / something else"
        if page.query_selector("#question-form") and not page.locator("#continue").is_visible():
            # The next question, not the one answered, and the keyboard starts at it.
            assert page.input_value("input[name=answer_to]") not in asked
            focused.append(page.evaluate("document.activeElement.id"))
            if len(focused) == 1:
                assert_accessible(page)
    assert focused and set(focused) == {"question"}, focused
    assert page.locator("#crux").inner_text().strip()
    assert page.evaluate("window.journalMarker") == "no page load since the first question"
    assert page.evaluate("history.length") == length and page.url.endswith("/journal/act")
    # The keyboard starts at the crux, or at the safety notice when one heads it.
    heading = "#safety h2" if page.locator("#safety").count() else "#result-heading"
    assert page.locator(heading).evaluate("h => h === document.activeElement")
    final = page.locator("#belief-chart .value").all_inner_texts()
    assert final and final != charts[0], (charts, final)
    assert_accessible(page)
    # Back: to the entry form (never to an answered question), the entry still written.
    page.go_back()
    page.wait_for_selector("#entry-form")
    assert page.url == live_server.url + "/journal/"
    assert page.locator("#question").count() == 0
    assert page.input_value("#entry") == TWO_THEMES


def test_an_answer_that_cannot_be_sent_can_be_sent_again_and_an_ended_session_signs_in(
    page: Any, live_server: Any
) -> None:
    """What is not a turn of the journal is never swapped in: a lost connection leaves the
    question with a note, and the answer can be sent again; a session that ended meanwhile
    opens the sign-in page."""
    sign_in(page, live_server)
    start_entry(page)
    asked = page.input_value("input[name=answer_to]")
    page.route("**/journal/act", lambda route: route.abort())
    page.locator("button.option").first.click()
    page.wait_for_selector("#error")
    assert "could not be sent" in page.locator("#error").inner_text()
    assert page.locator("#error").evaluate("e => e === document.activeElement")
    assert page.input_value("input[name=answer_to]") == asked  # the question stays
    page.unroute("**/journal/act")
    # Sent again (the form was not left "sent"), after the session ended meanwhile.
    page.context.clear_cookies(name="sessionid")
    page.locator("button.option").first.click()
    page.wait_for_url("**/accounts/login/**")
    assert page.locator("#id_username").is_visible()
