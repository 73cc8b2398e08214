"""Keyboard and history in a real browser: Enter in a text box sends what the box is for (never
an irreversible choice nobody made), and the Back button leads somewhere, not to a dead end
(the journal's turns are swapped in by htmx and add no history entry: Back returns to the
entry)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import ENTRY, answer, needs_chromium, sign_in, start_entry
from tests.kg.factories import EntityCandidateFactory, EntityFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]


def test_enter_in_the_answer_box_sends_the_typed_text_and_never_an_option(
    page: Any, live_server: Any
) -> None:
    sign_in(page, live_server)
    start_entry(page)
    asked = page.input_value("input[name=answer_to]")
    page.press("#free_text", "Enter")  # an empty box: nothing is sent
    page.wait_for_timeout(300)
    assert page.input_value("input[name=answer_to]") == asked
    assert page.eval_on_selector("#free_text", "box => box.validity.valueMissing")
    # The first quick option would lead to another question; the typed words trip the guardrail.
    page.evaluate("window.journalMarker = 'same page'")
    page.fill("#free_text", "Honestly I don't want to be alive anymore.")
    page.press("#free_text", "Enter")
    page.wait_for_selector("#crisis")
    assert "988" in page.locator("#crisis").inner_text()
    # Swapped in by htmx like any turn: the resources, calm and first, hold the focus.
    assert page.evaluate("window.journalMarker") == "same page"
    assert page.locator("#safety").get_attribute("role") == "alert"
    assert page.locator("#safety h2").evaluate("h => h === document.activeElement")
    assert page.locator("#question-form").count() == 0


def test_back_never_shows_an_answered_question_and_a_stale_one_leads_back_to_the_entry(
    page: Any, live_server: Any
) -> None:
    from playwright.sync_api import Error

    sign_in(page, live_server)
    start_entry(page)  # a page load, and a history entry
    answered = page.inner_html("main")
    answer(page, page.locator("button.option").first)  # htmx: swapped in, no history entry
    # Back leaves the conversation for the entry form it started from, the entry still written
    # (never the answered question: it cannot be answered again).
    page.go_back()
    page.wait_for_selector("#entry-form")
    assert page.url == live_server.url + "/journal/"
    assert page.locator("#question").count() == 0 and page.input_value("#entry") == ENTRY
    # Forward would send the entry again; the answer page is not kept (no-store): the browser
    # asks before sending anything again.
    with pytest.raises(Error, match="ERR_CACHE_MISS"):
        page.go_forward()
    page.wait_for_url(lambda url: url.startswith("chrome-error://"))
    # An old copy of the question (a second tab, a restored session) answered again, with
    # another answer (the same answer from the same copy replays the next question).
    page.goto(live_server.url + "/journal/")
    page.eval_on_selector("main", "(main, html) => { main.innerHTML = html; }", answered)
    page.locator("button.option").nth(1).click()
    page.wait_for_selector("#error")
    error = page.locator("#error")
    assert error.get_attribute("role") == "alert"
    assert "already answered" in error.inner_text()
    assert page.input_value("#entry") == ENTRY
    page.click("#start")
    page.wait_for_selector("#question")


@pytest.fixture
def candidate(transactional_db: None) -> tuple[int, int]:
    """A pending candidate, the entity it is another name for, and a superuser to moderate:
    made before the browser starts (see the ``writer`` fixture)."""
    from django.contrib.auth.models import User

    User.objects.create_superuser("root", password="pw-root-123")
    canonical: Any = EntityFactory(name="PostgreSQL")
    pending: Any = EntityCandidateFactory(name="Postgres")
    return pending.pk, canonical.pk


def test_enter_in_the_review_form_never_approves_and_in_the_alias_box_aliases(
    candidate: tuple[int, int], page: Any, live_server: Any
) -> None:
    candidate_id, canonical_id = candidate
    review = f"{live_server.url}/admin/kg/entitycandidate/{candidate_id}/review/"
    page.goto(review)
    page.fill("#id_username", "root")
    page.fill("#id_password", "pw-root-123")
    page.click("input[type=submit]")
    page.wait_for_selector("#kg-decide")
    page.fill("input[name=note]", "same database")
    page.press("input[name=note]", "Enter")  # nothing is decided
    page.wait_for_timeout(300)
    assert page.url == review and page.inner_text(".kg-status") == "pending"
    page.fill("#kg-canonical-id", str(canonical_id))
    page.press("#kg-canonical-id", "Enter")
    page.wait_for_url("**/admin/kg/entitycandidate/")
    page.goto(review)
    assert page.inner_text(".kg-status") == "aliased"
