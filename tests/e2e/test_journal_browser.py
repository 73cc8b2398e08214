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
    assert page.locator("#crux").inner_text().startswith("The writer keeps giving time")
    assert "the agent was confident enough" in page.locator("#stopped").inner_text()
    # On a phone the reasoning trail wraps instead of widening the page.
    page.set_viewport_size({"width": 375, "height": 800})
    page.click("details summary")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    page.click("#again")
    page.wait_for_selector("#entry")
