"""``make screenshots``: every page, at a desktop and a phone width, from a live server with
the demo data (``seed_demo``), saved as ``docs/screenshots/<page>-<width>.png``.

Not a test (pytest collects only ``test_*.py``): it is run by name, with the browser tests'
live server and chromium (tests/e2e/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from tests.e2e.conftest import ENTRY, needs_chromium, sign_in_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]

OUT = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
WIDTHS = {"desktop": (1280, 900), "phone": (375, 812)}
PASSWORD = "demo-screenshots-1"


@pytest.fixture
def demo(transactional_db: None) -> dict[str, str]:
    """The demo data, its user able to sign in and moderate, and the addresses worth showing."""
    from django.contrib.auth.models import Group, User
    from django.db.models import Count

    from kg.models import Entity
    from thoughts.demo import demo_thought_id

    call_command("seed_demo", verbosity=0)
    user = User.objects.get(username="demo")
    user.set_password(PASSWORD)
    user.is_staff = True
    user.save()
    user.groups.add(Group.objects.get(name="KG moderators"))
    busiest = Entity.objects.annotate(n=Count("edges_out") + Count("edges_in")).order_by("-n")[0]
    return {
        "thought": f"/thoughts/{demo_thought_id('checkout-3')}/",
        "entity": f"/kg/entities/{busiest.pk}/",
    }


def _journal_question(page: Any) -> None:
    page.fill("#entry", ENTRY)
    page.click("#start")
    page.wait_for_selector("#question-form", state="attached")
    if page.locator("#continue").is_visible():
        page.click("#continue")


def _journal_crux(page: Any) -> None:
    """The final screen: the crux, the secondary themes, the entry's cited sentences."""
    _journal_question(page)
    for _ in range(6):
        if page.query_selector("#result"):
            break
        page.locator("button.option").first.click()
        page.wait_for_load_state()
    page.wait_for_selector("#result")


def _reflect(page: Any) -> None:
    page.fill("#entry", ENTRY)
    page.click("#reflect")
    page.wait_for_selector("#reflection")


def test_screenshots(page: Any, live_server: Any, demo: dict[str, str]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    shots: list[tuple[str, str, Callable[[Any], None] | None]] = [
        ("home", "/", None),
        ("thoughts", "/thoughts/", None),
        ("thought", demo["thought"], None),
        ("kg", "/kg/", None),
        ("entity", demo["entity"] + "?depth=2", None),
        ("journal", "/journal/", _journal_question),
        ("journal-crux", "/journal/", _journal_crux),
        ("reflect", "/journal/", _reflect),
        ("inner-voice", "/inner-voice/", None),
    ]
    sign_in_as(page, live_server, "demo", PASSWORD, "/thoughts/")
    for name, path, then in shots:
        for width, (w, h) in WIDTHS.items():
            page.set_viewport_size({"width": w, "height": h})
            page.goto(live_server.url + path)
            if then is not None:
                then(page)
            page.screenshot(path=str(OUT / f"{name}-{width}.png"), full_page=True)
    assert len(list(OUT.glob("*.png"))) >= len(shots) * len(WIDTHS)
