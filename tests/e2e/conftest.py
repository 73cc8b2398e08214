"""A real browser (Debian's chromium, never downloaded) against Django's live server."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.db import connections

CHROMIUM = "/usr/bin/chromium"
ENTRY = (
    "Tash texted at midnight again asking if I could fit her in for a free appointment before "
    "work. I said yes, like I always say yes. I can't say no to her. Every time she asks I drop "
    "everything and help, and then I'm annoyed that I never hold the line."
)
AXE = Path(__file__).parent / "vendor" / "axe.min.js"
# A browser test that cannot start a browser fails: a skipped page test would let a broken page
# pass `make test` (which installs chromium when it runs as root). Only SKIP_BROWSER=1, set by
# hand, skips them; CI never sets it.
needs_chromium = pytest.mark.usefixtures("chromium_present")


def require_browser(chromium: str = CHROMIUM) -> None:
    if os.environ.get("SKIP_BROWSER") == "1":
        pytest.skip("SKIP_BROWSER=1: the browser tests were asked to be skipped")
    if not Path(chromium).exists():
        pytest.fail(
            f"the browser tests need Debian's chromium at {chromium}: apt-get install chromium"
        )


@pytest.fixture
def chromium_present() -> None:
    require_browser()


@pytest.fixture(scope="session")
def distress_model_loaded() -> None:
    """The distress detector's sentence model, loaded once per session before the first page
    opens, as the server loads it at start-up: every journal turn reads the entry with it, and
    loading it inside the first turn (torch, the weights) could outlast Playwright's 30 s on a
    busy machine, so which test came first decided whether a test passed. The tests' hash
    embeddings keep the local model in its own cache (``local_provider``), which this fills."""
    from django.test import override_settings

    from agent.safety import semantic
    from legacymind.providers import embeddings

    with override_settings(EMBEDDING_PROVIDER="hash", EMBEDDING_DIM=0):
        embeddings._cached.cache_clear()
        semantic.model()
        semantic.read_texts(["The sentence model is read once, before the first page."])
        embeddings._cached.cache_clear()


@pytest.fixture
def writer(transactional_db: None) -> Any:
    """The account the browser signs in with, made before Playwright starts: Django code run
    while Playwright's event loop runs gets a connection of its own, which nothing closes (it
    kept the test database from being dropped at the end of the run)."""
    from django.contrib.auth.models import User

    return User.objects.create_user("writer", password="correct horse battery")


@pytest.fixture
def page(
    live_server: Any, writer: Any, monkeypatch: pytest.MonkeyPatch, distress_model_loaded: None
) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; fixtures touch the DB first.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    call_command("createcachetable", verbosity=0)
    cache.clear()
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        pg = browser.new_page()
        try:
            yield pg
        finally:
            browser.close()
            # Queries made while Playwright's loop runs (a fixture set up after this one, such
            # as the screenshots' seed_demo, or the test itself) get a connection of their own,
            # which nothing else closes: left open, it kept the test database from being dropped
            # at the end of the run. Closed here, in the same state they were opened in.
            connections.close_all()


def assert_accessible(page: Any) -> None:
    """axe-core (vendored, injected here, never served by the app) finds no serious or critical
    violation on the page as it is now."""
    page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        """async () => {
            const r = await axe.run(document, {resultTypes: ["violations"]});
            return r.violations.filter(v => v.impact === "serious" || v.impact === "critical")
              .map(v => `${v.id} (${v.impact}): ${v.nodes.map(n => n.target.join(" ")).join(", ")}`);
        }"""
    )
    assert found == [], f"{page.url}: {found}"


def sign_in_as(page: Any, live_server: Any, username: str, password: str, path: str) -> None:
    """Open ``path``, which sends the browser to the sign-in form, sign in and come back."""
    page.goto(live_server.url + path)
    assert "/accounts/login/" in page.url
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("#sign-in-submit")
    page.wait_for_url(live_server.url + path)


def sign_in(page: Any, live_server: Any) -> None:
    """The journal needs a login: the browser is sent to the sign-in form and back."""
    page.goto(live_server.url + "/journal/")
    assert page.url == live_server.url + "/accounts/login/?next=/journal/"
    page.fill("#id_username", "writer")
    page.fill("#id_password", "correct horse battery")
    page.click("#sign-in-submit")
    page.wait_for_selector("#entry")
    assert page.url == live_server.url + "/journal/"
    assert page.locator("#signed-in").inner_text() == "writer"


def start_entry(page: Any, text: str = ENTRY, *, shows: str = "#question") -> None:
    """Write ``text`` and start; waits for what the page then ``shows``."""
    page.fill("#entry", text)
    page.click("#start")
    page.wait_for_selector(shows)


def answer(page: Any, button: Any) -> None:
    """Click an answer (an option, or Send) and wait until htmx has swapped the turn's region in
    and settled it (the page's script has then moved the focus): no page load to wait for."""
    old = page.locator("#journal").element_handle()
    button.click()
    page.wait_for_function(
        """old => !old.isConnected && document.getElementById("journal")
                 && !document.querySelector(".htmx-settling, .htmx-request")""",
        arg=old,
    )
