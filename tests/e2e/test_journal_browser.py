"""The journaling flow in a real browser (Debian's chromium, never downloaded)."""

from __future__ import annotations

from typing import Any

import pytest

from legacymind.providers import embeddings
from tests.e2e.conftest import needs_chromium, sign_in, start_entry

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]


def test_write_entry_answer_questions_and_see_the_crux(
    page: Any, live_server: Any, settings: Any
) -> None:
    # The agent's answer model compares options and cruxes by meaning: the real sentence model.
    settings.EMBEDDING_PROVIDER = "local"
    embeddings._cached.cache_clear()
    embeddings.warm_up()  # as the server does at start-up: the first click does not load it
    sign_in(page, live_server)
    start_entry(page)
    for _ in range(6):
        if page.query_selector("#result"):
            break
        options = page.locator("button.option")
        texts = options.all_inner_texts()
        assert texts[-1] == "Not sure / something else"
        wanted = next((i for i, t in enumerate(texts) if "say no" in t), 0)
        options.nth(wanted).click()
        page.wait_for_load_state()
    # The crux speaks to the writer about their entry (issue 32): second person, the
    # boundaries frame, and the entry's own sentences cited.
    crux = page.locator("#crux").inner_text()
    assert crux.startswith("You keep giving your time"), crux
    assert "the agent was confident enough" in page.locator("#stopped").inner_text()
    # On a phone the reasoning trail wraps instead of widening the page.
    page.set_viewport_size({"width": 375, "height": 800})
    page.click("details summary")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    page.click("#again")
    page.wait_for_selector("#entry")


def test_a_concern_shows_the_resources_first_and_the_writer_chooses_to_go_on(
    page: Any, live_server: Any
) -> None:
    from tests.agent.test_distress_doors import CONCERN_ENTRY

    sign_in(page, live_server)
    start_entry(page, CONCERN_ENTRY, shows="#safety")
    notice = page.locator("#safety")
    assert notice.get_attribute("data-level") == "concern"
    assert "988" in notice.inner_text() and "findahelpline.com" in notice.inner_text()
    # The question waits until the writer chooses to go on.
    assert not page.locator("#question-form").is_visible()
    page.click("#continue")
    assert page.locator("#question-form").is_visible()
    assert page.locator("#safety").is_visible()  # the resources stay on the page
    page.locator("button.option").first.click()
    page.wait_for_load_state()
    assert page.locator("#safety").get_attribute("data-level") == "concern"


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
