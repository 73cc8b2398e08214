"""The inner voice's pages in a real browser (Debian's chromium, never downloaded): sign in,
ask, ask on in the thread, close it, find it again by searching."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connections

from innervoice.models import DialogueThread
from tests.e2e.conftest import assert_accessible, needs_chromium
from tests.thoughts.factories import ThoughtFactory
from thoughts.models import Thought

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]

QUESTION = "What keeps going wrong with the billing deploys?"


@pytest.fixture
def stored(writer: Any) -> Any:
    """Material for the answer, stored before Playwright starts (see ``writer``)."""
    from django.core.management import call_command

    thought = ThoughtFactory(
        owner=writer, content="Billing deploys fail when the migration locks invoices."
    )
    call_command("reembed", verbosity=0)  # the factory stores no vector: retrieval needs one
    return thought


def test_ask_read_continue_close_and_search(page: Any, live_server: Any, stored: Any) -> None:
    page.goto(live_server.url + "/inner-voice/")
    assert page.url == live_server.url + "/accounts/login/?next=/inner-voice/"
    page.fill("#id_username", "writer")
    page.fill("#id_password", "correct horse battery")
    page.click("#sign-in-submit")
    page.wait_for_selector("#query")

    # No chat model answers in the suite: the offline composer does, from the stored thought.
    page.fill("#query", QUESTION)
    page.fill("#topic", "billing deploys")
    page.click("#ask")
    page.wait_for_selector("#exchange-1.asked")
    assert "/inner-voice/threads/" in page.url
    assert page.locator("#topic-title").inner_text() == "billing deploys"
    answer = page.locator("#exchange-1 .answer").inner_text()
    assert "Billing deploys fail" in answer
    # Readable: no ids in the text, and its sources said once, as links below it.
    assert "thoughts:" not in answer and "Sources" not in answer
    # The composer's lines are a list; who answered is a muted note, not words in the answer.
    assert page.locator("#exchange-1 .answer li").count() >= 1
    assert "offline-composer" not in answer
    assert "offline composer" in page.locator("#exchange-1 .answered-by").inner_text()
    assert page.locator("#exchange-1").inner_text().count("Sources") == 1
    assert page.locator("#exchange-1 .feedback").inner_text().strip()
    assert page.locator("#query").input_value() == ""  # the question is not kept anywhere

    assert_accessible(page)
    # The follow-up question is one click to ask next.
    follow_up = page.locator("#exchange-1 .feedback").inner_text().strip()
    page.click("#ask-next")
    page.wait_for_selector("#exchange-2.asked")
    assert page.locator("section.exchange").count() == 2
    assert page.locator("#query").input_value() == ""
    # The answer's sources are links to their pages: the stored thought it drew on.
    source = page.locator("#exchange-1 a.source").first
    assert source.get_attribute("href") == f"/thoughts/{stored.pk}/"
    assert follow_up

    source.click()
    page.wait_for_url(f"**/thoughts/{stored.pk}/")
    assert "Billing deploys fail" in page.locator("#content").inner_text()
    page.go_back()
    page.wait_for_selector("#close")
    page.click("#close")
    page.wait_for_selector("#thread-status")
    assert "closed" in page.locator("#thread-status").inner_text()
    assert page.locator("#ask-form").count() == 0

    page.click("#all-threads")
    page.fill("#q", "BILLING DEPLOYS")
    page.click("#search-submit")
    page.wait_for_selector("#threads")
    assert page.locator("#threads li").inner_text().startswith("billing deploys")
    assert_accessible(page)

    try:
        assert DialogueThread.objects.get().exchanges.count() == 2
        assert not Thought.objects.filter(content__contains=QUESTION).exists()
    finally:
        # Queries made while Playwright's loop runs open a connection nothing else closes; left
        # open, it keeps the test database from being dropped.
        connections.close_all()
    # On a phone the page does not widen.
    page.set_viewport_size({"width": 375, "height": 800})
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
