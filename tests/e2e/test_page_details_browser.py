"""What a demanding user notices in a real browser (Debian's chromium): keyboard focus that can
be seen, room to write, and long names that do not break the page on a phone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import assert_accessible, needs_chromium, sign_in_as
from tests.kg.factories import EdgeFactory, EntityFactory
from tests.thoughts.factories import ThoughtFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]
PASSWORD = "correct horse battery"
LONG = "the-extremely-long-unbroken-entity-name-from-a-config-file-" * 2


@pytest.fixture
def material(writer: Any) -> int:
    """A thought, and an entity with a long name and a long relation (made before Playwright)."""
    ThoughtFactory(owner=writer, content="Pin the serializer.")
    long = EntityFactory(name=LONG, entity_type="configuration-management-system")
    EdgeFactory(
        source=long, target=EntityFactory(name="ops"), rel_type="is_configured_by_the_ops_team"
    )
    return int(long.pk)


def test_keyboard_focus_is_plainly_visible(page: Any, live_server: Any, material: int) -> None:
    sign_in_as(page, live_server, "writer", PASSWORD, "/thoughts/")
    page.keyboard.press("Tab")  # the skip link
    page.keyboard.press("Tab")  # the brand
    focused = (
        "() => { const s = getComputedStyle(document.activeElement);"
        " return [document.activeElement.tagName, s.outlineStyle, s.outlineWidth]; }"
    )
    assert page.evaluate(focused) == ["A", "solid", "2px"]
    page.focus("summary")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")  # focus-visible comes from the keyboard
    assert page.evaluate(focused)[1:] == ["solid", "2px"]
    page.goto(f"{live_server.url}/kg/entities/{material}/")
    page.keyboard.press("Tab")
    page.focus("#kg-graph a.node.focus")
    page.keyboard.press("Tab")  # the neighbour, reached by the keyboard
    ring = page.evaluate(
        "() => getComputedStyle(document.activeElement.querySelector('circle')).strokeWidth"
    )
    assert ring == "4px"
    # A dark ring, not the primary blue every other circle is drawn in.
    stroke = "c => getComputedStyle(c).stroke"
    focused_ring = page.evaluate(
        "() => getComputedStyle(document.activeElement.querySelector('circle')).stroke"
    )
    assert focused_ring != page.eval_on_selector("#kg-graph .focus circle", stroke)


def test_long_names_fit_a_phone_and_the_journal_has_room_to_write(
    page: Any, live_server: Any, material: int
) -> None:
    sign_in_as(page, live_server, "writer", PASSWORD, "/journal/")
    assert page.locator("#entry").bounding_box()["height"] >= 150  # a few lines, not one
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(f"{live_server.url}/kg/entities/{material}/")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    label = page.eval_on_selector("#kg-graph .edge-label", "t => t.lastChild.textContent")
    assert label.endswith("…") and len(label) <= 18  # cut to fit between the circles
    assert_accessible(page)
